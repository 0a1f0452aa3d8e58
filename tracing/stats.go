package tracing

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/telemetry"
)

const meterName = "github.com/kretrieve/kretrieve/tracing"

// SpanStats counts the sampled spans that went through the OTLP export
// pipeline. All counts are zero when no trace exporter is configured.
type SpanStats struct {
	// Ended counts sampled spans that ended and were handed to the batch
	// span processor.
	Ended int64
	// Exported counts spans the exporter sent successfully. A collector's
	// partial-success rejections are reported through the error handler
	// and still counted here.
	Exported int64
	// Failed counts spans in batches whose export returned an error
	// (after the exporter's own retries).
	Failed int64
	// Dropped counts spans that never reached the collector. After
	// [Providers.Shutdown] it is Ended - Exported: failed exports, spans
	// dropped because the batch processor's queue was full, and spans
	// still queued when shutdown gave up. Before Shutdown queue overflows
	// cannot be told apart from queued spans, so Dropped is then a lower
	// bound equal to Failed.
	Dropped int64
}

// spanCounters holds the counters behind SpanStats. The hot path (one
// ended span) costs one atomic add.
type spanCounters struct {
	ended, exported, failed atomic.Int64
	// final is Ended-Exported captured after the tracer provider shut down;
	// -1 until then.
	final atomic.Int64
}

func newSpanCounters() *spanCounters {
	c := &spanCounters{}
	c.final.Store(-1)
	return c
}

func (c *spanCounters) dropped() int64 {
	d := c.failed.Load()
	if f := c.final.Load(); f > d {
		d = f
	}
	return d
}

func (c *spanCounters) stats() SpanStats {
	return SpanStats{
		Ended:    c.ended.Load(),
		Exported: c.exported.Load(),
		Failed:   c.failed.Load(),
		Dropped:  c.dropped(),
	}
}

// markShutdown records the final drop count once the batch processor has
// drained (or given up).
func (c *spanCounters) markShutdown() {
	c.final.Store(max(c.ended.Load()-c.exported.Load(), 0))
}

// countingProcessor counts sampled spans on their way into the wrapped
// batch span processor, which ignores unsampled ones too.
type countingProcessor struct {
	sdktrace.SpanProcessor
	c *spanCounters
}

func (p countingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() {
		p.c.ended.Add(1)
	}
	p.SpanProcessor.OnEnd(s)
}

// countingExporter counts the outcome of every export call.
type countingExporter struct {
	sdktrace.SpanExporter
	c *spanCounters
}

func (e countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.c.failed.Add(int64(len(spans)))
	} else {
		e.c.exported.Add(int64(len(spans)))
	}
	return err
}

// registerSpanMetrics exposes the counters as observable counters. The
// dropped counter is monotonic: Failed until shutdown, then Ended-Exported,
// which the final collection at meter-provider shutdown reports.
func registerSpanMetrics(mp metric.MeterProvider, c *spanCounters) error {
	m := mp.Meter(meterName)
	dropped, err := m.Int64ObservableCounter(telemetry.MetricSpansDropped,
		metric.WithUnit(telemetry.MetricSpansUnit),
		metric.WithDescription("Sampled spans that did not reach the trace collector (failed exports; queue overflow is counted at shutdown)."))
	if err != nil {
		return fmt.Errorf("create %s: %w", telemetry.MetricSpansDropped, err)
	}
	exported, err := m.Int64ObservableCounter(telemetry.MetricSpansExported,
		metric.WithUnit(telemetry.MetricSpansUnit),
		metric.WithDescription("Spans successfully exported to the trace collector."))
	if err != nil {
		return fmt.Errorf("create %s: %w", telemetry.MetricSpansExported, err)
	}
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(dropped, c.dropped())
		o.ObserveInt64(exported, c.exported.Load())
		return nil
	}, dropped, exported)
	if err != nil {
		return fmt.Errorf("register span metrics: %w", err)
	}
	return nil
}
