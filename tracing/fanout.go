// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"errors"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The fan-out exporters serve an exporter list such as
// OTEL_TRACES_EXPORTER=otlp,console: one batch processor or periodic
// reader hands each batch to every exporter in turn, so the span counters
// and a delta-temporality metric producer see one export per batch. A
// batch is exported to every exporter whatever the others do; the export
// fails (and is counted as failed) when any of them fails.

// each calls do with every exporter, whatever the others returned, and
// joins their errors.
func each[E any](exporters []E, do func(E) error) error {
	var errs []error
	for _, e := range exporters {
		errs = append(errs, do(e))
	}
	return errors.Join(errs...)
}

// fanoutSpans exports spans to each of its exporters.
type fanoutSpans []sdktrace.SpanExporter

// ExportSpans implements sdktrace.SpanExporter.
func (f fanoutSpans) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return each(f, func(e sdktrace.SpanExporter) error { return e.ExportSpans(ctx, spans) })
}

// Shutdown implements sdktrace.SpanExporter.
func (f fanoutSpans) Shutdown(ctx context.Context) error {
	return each(f, func(e sdktrace.SpanExporter) error { return e.Shutdown(ctx) })
}

// fanoutMetrics exports metrics to each of its exporters, which share the
// temporality and aggregation of the environment's preferences (those of
// the first are reported).
type fanoutMetrics []sdkmetric.Exporter

// Temporality implements sdkmetric.Exporter.
func (f fanoutMetrics) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return f[0].Temporality(k)
}

// Aggregation implements sdkmetric.Exporter.
func (f fanoutMetrics) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return f[0].Aggregation(k)
}

// Export implements sdkmetric.Exporter.
func (f fanoutMetrics) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return each(f, func(e sdkmetric.Exporter) error { return e.Export(ctx, rm) })
}

// ForceFlush implements sdkmetric.Exporter.
func (f fanoutMetrics) ForceFlush(ctx context.Context) error {
	return each(f, func(e sdkmetric.Exporter) error { return e.ForceFlush(ctx) })
}

// Shutdown implements sdkmetric.Exporter.
func (f fanoutMetrics) Shutdown(ctx context.Context) error {
	return each(f, func(e sdkmetric.Exporter) error { return e.Shutdown(ctx) })
}

// fanoutLogs exports log records to each of its exporters.
type fanoutLogs []sdklog.Exporter

// Export implements sdklog.Exporter.
func (f fanoutLogs) Export(ctx context.Context, records []sdklog.Record) error {
	return each(f, func(e sdklog.Exporter) error { return e.Export(ctx, records) })
}

// ForceFlush implements sdklog.Exporter.
func (f fanoutLogs) ForceFlush(ctx context.Context) error {
	return each(f, func(e sdklog.Exporter) error { return e.ForceFlush(ctx) })
}

// Shutdown implements sdklog.Exporter.
func (f fanoutLogs) Shutdown(ctx context.Context) error {
	return each(f, func(e sdklog.Exporter) error { return e.Shutdown(ctx) })
}

// newAll builds an exporter of each kind (skipping the kinds skip
// reports), and shuts the ones built down again if one fails.
func newAll[E interface{ Shutdown(context.Context) error }](ctx context.Context, kinds []string, skip func(string) bool, build func(string) (E, error)) ([]E, error) {
	var exps []E
	for _, k := range kinds {
		if skip != nil && skip(k) {
			continue
		}
		e, err := build(k)
		if err != nil {
			for _, b := range exps {
				err = errors.Join(err, b.Shutdown(ctx))
			}
			return nil, err
		}
		exps = append(exps, e)
	}
	return exps, nil
}
