// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/tracing"
)

// newDiscardSink starts an OTLP/HTTP endpoint that reads every request body,
// throws it away and answers 200 with an empty ExportTraceServiceResponse
// (an empty protobuf message is zero bytes).
func newDiscardSink(tb testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// spanCounts counts spans ended and spans the exporter accepted.
type spanCounts struct {
	ended    atomic.Int64
	exported atomic.Int64
}

type countingProcessor struct {
	sdktrace.SpanProcessor
	c *spanCounts
}

func (p countingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	p.c.ended.Add(1)
	p.SpanProcessor.OnEnd(s)
}

type countingExporter struct {
	sdktrace.SpanExporter
	c *spanCounts
}

func (e countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		e.c.exported.Add(int64(len(spans)))
	}
	return err
}

// providers are the SDK providers of one traced sub-benchmark run.
type providers struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
	// metrics aggregates kafkatrace's messaging metrics, a producer of mp's
	// reader through tracing.NewMetricsProducer (as
	// tracing.WithMetricProducer makes it).
	metrics *kafkatrace.Metrics
	counts  *spanCounts
	// root is the variant's RootSampler (nil: none).
	root *tracing.RootSampler
}

// kafkatraceOptions returns the Tracer options the providers call for:
// WithRootSampler with their RootSampler.
func (p *providers) kafkatraceOptions() []kafkatrace.Option {
	if p.root == nil {
		return nil
	}
	return []kafkatrace.Option{kafkatrace.WithRootSampler(p.root)}
}

// newProviders builds a tracer provider exporting over OTLP/HTTP to a
// discarding sink through a counted batch span processor with bspOpts, and a
// meter provider whose metrics (kotel's instruments, kafkatrace's Metrics)
// are recorded but never read.
func newProviders(tb testing.TB, v relayVariant) *providers {
	tb.Helper()
	sink := newDiscardSink(tb)
	var exp sdktrace.SpanExporter
	var err error
	if v.otlpwire {
		exp, err = otlpwire.New(otlpwire.Config{EndpointURL: sink.URL + "/v1/traces", Retry: otlpwire.DefaultRetry})
	} else {
		exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(sink.URL+"/v1/traces"))
	}
	if err != nil {
		tb.Fatalf("otlp exporter: %v", err)
	}
	c := &spanCounts{}
	bsp := sdktrace.NewBatchSpanProcessor(countingExporter{SpanExporter: exp, c: c}, v.bspOpts...)
	metrics := kafkatrace.NewMetrics()
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithSampler(v.sampler)}
	var root *tracing.RootSampler
	if v.rootRatio != "" {
		if root, err = tracing.NewRootSampler("parentbased_traceidratio", v.rootRatio); err != nil {
			tb.Fatalf("root sampler: %v", err)
		}
		tpOpts = root.TracerProviderOptions()
	}
	p := &providers{
		tp:      sdktrace.NewTracerProvider(append(tpOpts, sdktrace.WithSpanProcessor(countingProcessor{SpanProcessor: bsp, c: c}))...),
		root:    root,
		mp:      sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader(sdkmetric.WithProducer(tracing.NewMetricsProducer(metrics))))),
		metrics: metrics,
		counts:  c,
	}
	tb.Cleanup(func() { _ = p.shutdown() })
	return p
}

// shutdown flushes and stops both providers; safe to call more than once.
func (p *providers) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	err := p.tp.Shutdown(ctx)
	_ = p.mp.Shutdown(ctx)
	return err
}
