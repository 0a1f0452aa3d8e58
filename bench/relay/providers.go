// SPDX-License-Identifier: Apache-2.0

package relay

import (
	"context"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/tracing"
)

// SpanCounts counts spans ended and spans the exporter accepted.
type SpanCounts struct {
	Ended    atomic.Int64
	Exported atomic.Int64
}

type countingProcessor struct {
	sdktrace.SpanProcessor
	c *SpanCounts
}

func (p countingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	p.c.Ended.Add(1)
	p.SpanProcessor.OnEnd(s)
}

type countingExporter struct {
	sdktrace.SpanExporter
	c *SpanCounts
}

func (e countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		e.c.Exported.Add(int64(len(spans)))
	}
	return err
}

// Providers are the SDK providers of one traced relay run.
type Providers struct {
	TP *sdktrace.TracerProvider
	MP *sdkmetric.MeterProvider
	// Metrics aggregates kafkatrace's messaging metrics, a producer of
	// MP's reader through tracing.NewMetricsProducer (as
	// tracing.WithMetricProducer makes it).
	Metrics *kafkatrace.Metrics
	Counts  *SpanCounts
	// Root is the variant's RootSampler (nil: none; see Variant.RootRatio).
	Root *tracing.RootSampler
}

// KafkatraceOptions returns the Tracer options the providers call for:
// WithRootSampler with their RootSampler.
func (p *Providers) KafkatraceOptions() []kafkatrace.Option {
	if p.Root == nil {
		return nil
	}
	return []kafkatrace.Option{kafkatrace.WithRootSampler(p.Root)}
}

// NewProviders builds a tracer provider with v's sampler (a
// tracing.RootSampler's with v.RootRatio), exporting over
// OTLP/HTTP (v.OTLPWire: kretrieve's internal/otlpwire, otherwise the
// SDK's otlptracehttp) to a discarding sink through a counted batch span
// processor with v.BatchOptions, and a meter provider whose metrics
// (kotel's instruments, kafkatrace's Metrics) are recorded but never read.
// Both are shut down by tb's cleanup.
func NewProviders(tb testing.TB, v Variant) *Providers {
	tb.Helper()
	sink := otlptest.NewDiscardSink(tb)
	var exp sdktrace.SpanExporter
	var err error
	if v.OTLPWire {
		exp, err = otlpwire.New(otlpwire.Config{EndpointURL: sink.URL + "/v1/traces", Retry: otlpwire.DefaultRetry})
	} else {
		exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(sink.URL+"/v1/traces"))
	}
	if err != nil {
		tb.Fatalf("otlp exporter: %v", err)
	}
	c := &SpanCounts{}
	bsp := sdktrace.NewBatchSpanProcessor(countingExporter{SpanExporter: exp, c: c}, v.BatchOptions...)
	metrics := kafkatrace.NewMetrics()
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithSampler(v.Sampler)}
	var root *tracing.RootSampler
	if v.RootRatio != "" {
		if root, err = tracing.NewRootSampler("parentbased_traceidratio", v.RootRatio); err != nil {
			tb.Fatalf("root sampler: %v", err)
		}
		tpOpts = root.TracerProviderOptions()
	}
	p := &Providers{
		TP:      sdktrace.NewTracerProvider(append(tpOpts, sdktrace.WithSpanProcessor(countingProcessor{SpanProcessor: bsp, c: c}))...),
		Root:    root,
		MP:      sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader(sdkmetric.WithProducer(tracing.NewMetricsProducer(metrics))))),
		Metrics: metrics,
		Counts:  c,
	}
	tb.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// Shutdown flushes and stops both providers; safe to call more than once.
func (p *Providers) Shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	err := p.TP.Shutdown(ctx)
	_ = p.MP.Shutdown(ctx)
	return err
}
