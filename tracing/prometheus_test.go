// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/tracing"
)

// Series names of the Prometheus endpoint.
const (
	promPathway = "kretrieve_pathway_latency_seconds"
	promProcess = "messaging_process_duration_seconds"
)

// servePrometheus starts Setup with a Prometheus endpoint on 127.0.0.1
// serving m's metrics, and returns the providers and the /metrics URL.
func servePrometheus(t *testing.T, m *kafkatrace.Metrics) (*tracing.Providers, string) {
	t.Helper()
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithPrometheusListen("127.0.0.1:0"),
		tracing.WithMetricProducer(tracing.NewMetricsProducer(m)))
	require.NoError(t, err)
	t.Cleanup(func() { shutdown(t, p) })
	return p, "http://" + p.PrometheusAddr() + "/metrics"
}

// scrape GETs url with the Accept header accept ("" for none) and returns
// the body and its Content-Type.
func scrape(t *testing.T, url, accept string) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b, resp.Header.Get("Content-Type")
}

// exemplarTraces parses an OpenMetrics body with Prometheus's own parser
// and returns, by series name, the trace_id of every exemplar.
func exemplarTraces(t *testing.T, body []byte, contentType string) map[string][]string {
	t.Helper()
	p, err := textparse.New(body, contentType, labels.NewSymbolTable(), textparse.ParserOptions{})
	require.NoError(t, err)
	out := map[string][]string{}
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if entry != textparse.EntrySeries {
			continue
		}
		var lset labels.Labels
		p.Labels(&lset)
		var e exemplar.Exemplar
		for p.Exemplar(&e) {
			out[lset.Get(labels.MetricName)] = append(out[lset.Get(labels.MetricName)], e.Labels.Get("trace_id"))
		}
	}
}

// A scraper asking for OpenMetrics gets it, with the exemplars of the
// pathway and messaging histograms (kretrieve's producer) and of an SDK
// counter, each carrying the trace_id of the sampled span it was recorded
// in.
func TestPrometheusOpenMetricsExemplars(t *testing.T) {
	m := kafkatrace.NewMetrics()
	p, url := servePrometheus(t, m)

	gw, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	out := &kgo.Record{Topic: "req", Value: []byte("q")}
	produce(gw, out)
	in := consumed(out)
	ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
	wk.EndProcess(ctx, in, qw.End, span, nil, "")
	recordTrace := span.SpanContext().TraceID().String()

	sdkCtx, sdkSpan := p.TracerProvider.Tracer("test").Start(t.Context(), "job")
	counter, err := p.MeterProvider.Meter("test").Int64Counter("job.items")
	require.NoError(t, err)
	counter.Add(sdkCtx, 3)
	sdkSpan.End()
	require.True(t, sdkSpan.SpanContext().IsSampled())
	counterTrace := sdkSpan.SpanContext().TraceID().String()

	body, ct := scrape(t, url, "application/openmetrics-text; version=1.0.0; charset=utf-8")
	require.True(t, strings.HasPrefix(ct, "application/openmetrics-text"), "Content-Type %q", ct)
	got := exemplarTraces(t, body, ct)
	for name, trace := range map[string]string{
		promPathway + "_bucket": recordTrace,
		promProcess + "_bucket": recordTrace,
		"job_items_total":       counterTrace,
	} {
		assert.Contains(t, got[name], trace, "exemplars of %s", name)
	}

	// The classic text format has no exemplars, and stays the default.
	_, ct = scrape(t, url, "")
	assert.True(t, strings.HasPrefix(ct, "text/plain"), "Content-Type %q", ct)
}

// A plain text scrape shows the pathway latency's explicit buckets with
// cumulative counts, not the +Inf bucket alone of a native histogram.
func TestPrometheusPathwayBuckets(t *testing.T) {
	m := kafkatrace.NewMetrics()
	_, url := servePrometheus(t, m)
	_, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	process := func(latency time.Duration, n int) {
		for range n {
			then := time.Now().Add(-latency).UnixNano()
			hdr := pathway.Context{Hash: 7, Origin: then, Prev: then}
			in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: hdr.Append(nil)}}})
			ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
			wk.EndProcess(ctx, in, qw.End, span, nil, "")
		}
	}
	process(40*time.Millisecond, 3)
	process(300*time.Millisecond, 2)
	process(3*time.Second, 1)

	body, _ := scrape(t, url, "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err)
	fam := fams[promPathway]
	require.NotNil(t, fam, "no %s in\n%s", promPathway, body)
	want := map[float64]uint64{0.025: 0, 0.05: 3, 0.25: 3, 0.5: 5, 2.5: 5, 5: 6, 60: 6, math.Inf(1): 6}
	for _, series := range fam.GetMetric() {
		var measure string
		for _, l := range series.GetLabel() {
			if l.GetName() == strings.ReplaceAll(string(otelnames.PathwayMeasure), ".", "_") {
				measure = l.GetValue()
			}
		}
		h := series.GetHistogram()
		require.Len(t, h.GetBucket(), len(kafkatrace.QueueWaitBounds())+1, "%s: buckets (+Inf included) %v", measure, h.GetBucket())
		assert.Equal(t, uint64(6), h.GetSampleCount(), measure)
		for _, b := range h.GetBucket() {
			if c, ok := want[b.GetUpperBound()]; ok {
				assert.Equal(t, c, b.GetCumulativeCount(), "%s: le=%g", measure, b.GetUpperBound())
			}
		}
	}
	assert.Len(t, fam.GetMetric(), 2, "an edge and an origin series")
}
