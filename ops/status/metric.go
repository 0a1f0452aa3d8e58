package status

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/kretrieve/kretrieve/otelnames"
)

// ScopeName is the instrumentation scope of the package's metrics.
const ScopeName = "github.com/kretrieve/kretrieve/ops/status"

// UnknownPlace is the otelnames.PathwayEdge of the unfinished requests
// whose place is not known (the counts of a process killed before it
// published).
const UnknownPlace = "unknown"

// RegisterUnfinished registers the gauge otelnames.MetricRequestsUnfinished
// on mp: at each collection it calls read and observes its Completeness's
// unfinished requests by where they wait (otelnames.PathwayEdge, with the
// topic and, when known, the consumer group). Nothing is observed when
// read reports false (the status could not be read), or where no request
// waits: an alert on the gauge's sum then neither fires nor resolves on a
// failed read. Unregister the returned registration to stop.
func RegisterUnfinished(mp metric.MeterProvider, read func(context.Context) (Completeness, bool)) (metric.Registration, error) {
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	g, err := meter.Int64ObservableGauge(otelnames.MetricRequestsUnfinished, metric.WithUnit(otelnames.MetricRequestsUnfinishedUnit),
		metric.WithDescription("Requests of the origin-time cohorts judged that have not ended (a result, a dead letter or an expiry), by where they wait."))
	if err != nil {
		return nil, fmt.Errorf("unfinished gauge: %w", err)
	}
	reg, err := meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		c, ok := read(ctx)
		if !ok {
			return nil
		}
		placed := uint64(0)
		for _, w := range c.Waiting {
			placed += w.Count
			attrs := []attribute.KeyValue{otelnames.PathwayEdge.String(w.Where), semconv.MessagingDestinationName(w.Topic)}
			if w.Group != "" {
				attrs = append(attrs, semconv.MessagingConsumerGroupName(w.Group))
			}
			o.ObserveInt64(g, int64(min(w.Count, 1<<62)), metric.WithAttributes(attrs...))
		}
		if c.Unfinished > placed { // requests whose place is not known
			o.ObserveInt64(g, int64(min(c.Unfinished-placed, 1<<62)), metric.WithAttributes(otelnames.PathwayEdge.String(UnknownPlace)))
		}
		return nil
	}, g)
	if err != nil {
		return nil, fmt.Errorf("unfinished gauge callback: %w", err)
	}
	return reg, nil
}
