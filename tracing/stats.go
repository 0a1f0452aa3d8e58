// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/otelnames"
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

// countingExporter counts the outcome of every export call and reports
// failures.
type countingExporter struct {
	sdktrace.SpanExporter
	c      *spanCounters
	report *exportReporter
}

func (e countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	n := int64(len(spans))
	err := e.report.export(ctx, "traces", &e.c.failed, n, func(ctx context.Context) error { return e.SpanExporter.ExportSpans(ctx, spans) })
	if err == nil {
		e.c.exported.Add(n)
	}
	return err
}

// DroppedTelemetry is what telemetry never reached its exporter's
// destination, per signal.
type DroppedTelemetry struct {
	// Spans is [SpanStats].Dropped.
	Spans int64
	// MetricExports counts failed metric exports (periodic, forced and the
	// final one at shutdown); the data points of a failed export are
	// lost with delta temporality and sent again by the next export with
	// cumulative temporality.
	MetricExports int64
	// LogRecords counts log records in failed log exports. Records the
	// log batch processor drops because its queue is full are not counted
	// (the SDK does not tell).
	LogRecords int64
}

// dropCounters counts the lost metrics and log records.
type dropCounters struct {
	metricExports, logRecords atomic.Int64
}

// countingMetricExporter counts and reports failed metric exports.
type countingMetricExporter struct {
	sdkmetric.Exporter
	c      *dropCounters
	report *exportReporter
}

func (e countingMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.report.export(ctx, "metrics", &e.c.metricExports, 1, func(ctx context.Context) error { return e.Exporter.Export(ctx, rm) })
}

// countingLogExporter counts and reports the records of failed log
// exports.
type countingLogExporter struct {
	sdklog.Exporter
	c      *dropCounters
	report *exportReporter
}

func (e countingLogExporter) Export(ctx context.Context, records []sdklog.Record) error {
	return e.report.export(ctx, "logs", &e.c.logRecords, int64(len(records)), func(ctx context.Context) error { return e.Exporter.Export(ctx, records) })
}

// exportReporter logs telemetry failures so that a dead, slow or
// traces-only collector gives one clear warning per process, not one per
// export: the first failure (of any signal, or any other OTel SDK error) is
// logged at warn level, every later one at debug level.
//
// It also ends the exports in flight when [Providers.Shutdown] gives up on
// them: the SDK's processors go on exporting in the background with their
// own timeouts (30 s) after their Shutdown returned on its context.
type exportReporter struct {
	log    *slog.Logger
	warned atomic.Bool
	// stopped is canceled by abort, at the end of Providers.Shutdown.
	stopped context.Context
	abort   context.CancelFunc
}

func newExportReporter(log *slog.Logger) *exportReporter {
	r := &exportReporter{log: log}
	r.stopped, r.abort = context.WithCancel(context.Background())
	return r
}

// export runs one export of signal on ctx, canceled too when r is
// aborted; when it fails, it adds n to lost and reports the error.
func (r *exportReporter) export(ctx context.Context, signal string, lost *atomic.Int64, n int64, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.stopped, cancel)
	defer stop()
	err := f(ctx)
	if err != nil {
		lost.Add(n)
		r.report(ctx, signal, err)
	}
	return err
}

func (r *exportReporter) report(ctx context.Context, signal string, err error) {
	if err == nil {
		return
	}
	args := []any{"err", err}
	if signal != "" {
		args = []any{"signal", signal, "err", err}
	}
	if r.warned.CompareAndSwap(false, true) {
		r.log.WarnContext(ctx, "telemetry export failing; the job goes on without it "+
			"(lost telemetry is counted, later failures are logged at debug level)", args...)
		return
	}
	r.log.DebugContext(ctx, "telemetry export failed", args...)
}

// registerSpanMetrics exposes the counters as observable counters. The
// dropped counter is monotonic: Failed until shutdown, then Ended-Exported,
// which the final collection at meter-provider shutdown reports. The
// failed metric exports and dropped log records are counted too.
func registerSpanMetrics(mp metric.MeterProvider, c *spanCounters, d *dropCounters) error {
	m := mp.Meter(meterName)
	var errs []error
	counter := func(inst metric.Int64ObservableCounter, err error) metric.Int64ObservableCounter {
		errs = append(errs, err)
		return inst
	}
	dropped := counter(m.Int64ObservableCounter(otelnames.MetricSpansDropped, metric.WithUnit(otelnames.MetricSpansUnit),
		metric.WithDescription("Sampled spans that did not reach the trace collector (failed exports; queue overflow is counted at shutdown).")))
	exported := counter(m.Int64ObservableCounter(otelnames.MetricSpansExported, metric.WithUnit(otelnames.MetricSpansUnit),
		metric.WithDescription("Spans successfully exported to the trace collector.")))
	metricExports := counter(m.Int64ObservableCounter(otelnames.MetricMetricExportsFailed, metric.WithUnit(otelnames.MetricExportsUnit),
		metric.WithDescription("Metric exports that failed (their data points are lost with delta temporality).")))
	logRecords := counter(m.Int64ObservableCounter(otelnames.MetricLogRecordsDropped, metric.WithUnit(otelnames.MetricLogRecordsUnit),
		metric.WithDescription("Log records in failed log exports.")))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("create span metrics: %w", err)
	}
	_, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(dropped, c.dropped())
		o.ObserveInt64(exported, c.exported.Load())
		o.ObserveInt64(metricExports, d.metricExports.Load())
		o.ObserveInt64(logRecords, d.logRecords.Load())
		return nil
	}, dropped, exported, metricExports, logRecords)
	if err != nil {
		return fmt.Errorf("register span metrics: %w", err)
	}
	return nil
}
