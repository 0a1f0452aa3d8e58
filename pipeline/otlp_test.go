// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/tracing"
)

// TestTracesExportedOverOTLP runs requests through the pipeline with telemetry
// built by tracing.Setup from OTEL_* variables, exported over real OTLP/HTTP
// to a server that decodes the protobuf, and checks the same trace structure.
func TestTracesExportedOverOTLP(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	t.Setenv("OTEL_SERVICE_NAME", "kretrieve-otlp-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	metrics := kafkatrace.NewMetrics()
	p, err := tracing.Setup(t.Context(), tracing.WithServiceName("ignored-default"), tracing.WithMetricProducer(tracing.NewMetricsProducer(metrics)))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Exporting {
		t.Fatal("an OTLP endpoint is set but Setup is not exporting")
	}

	h := newHarness(t, 3)
	h.tracers, h.meters, h.prop = p.TracerProvider, p.MeterProvider, p.Propagator
	h.metrics, h.cfg.ParentBasedSampling = metrics, p.ParentBasedSampling
	stop := h.startWorkers()
	c := h.client(true)
	outs := sendAndWait(t, c, []string{"parse a URL query string", "gzip", "json", "template html", "sha256"})
	stop()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Dropped != 0 || st.Exported != st.Ended {
		t.Fatalf("span stats %+v", st)
	}

	traces := byTrace(fromOTLP(srv.Spans()))
	if len(traces) != len(outs) {
		t.Fatalf("%d traces exported for %d requests", len(traces), len(outs))
	}
	for _, out := range outs {
		spans := traces[out.TraceID]
		if len(spans) == 0 {
			t.Fatalf("trace %s not exported", out.TraceID)
		}
		checkTrace(t, spans, h.cfg, "request")
		for _, s := range spans {
			if s.Service != "kretrieve-otlp-test" {
				t.Fatalf("span %s service %q, want OTEL_SERVICE_NAME", s.Name, s.Service)
			}
		}
	}
	// The pathway latency arrives as an exponential histogram whose
	// exemplars point at spans of exported traces.
	linked := 0
	for _, pt := range srv.ExponentialHistogramPoints(otelnames.MetricPathwayLatency) {
		for _, e := range pt.Exemplars {
			found := false
			for _, s := range traces[e.TraceID] {
				found = found || s.SpanID == e.SpanID
			}
			if !found {
				t.Errorf("exemplar of %v points at span %s of trace %s, which was not exported", pt.Attributes, e.SpanID, e.TraceID)
			}
			linked++
		}
	}
	if linked == 0 {
		t.Errorf("no pathway latency exemplar exported; metrics: %v", srv.MetricNames())
	}
	names := map[string]bool{}
	for _, n := range srv.MetricNames() {
		names[n] = true
	}
	if !names["kretrieve.messaging.queue_wait.duration"] {
		t.Errorf("queue-wait histogram not exported; metrics: %v", srv.MetricNames())
	}
}
