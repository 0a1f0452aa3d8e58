// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"fmt"
	"sync"

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

// maxPlaces bounds the places RegisterUnfinished remembers, to report 0
// for them once their requests ended.
const maxPlaces = 64

// RegisterUnfinished registers the gauge otelnames.MetricRequestsUnfinished
// on mp: at each collection it calls read and observes its Completeness's
// unfinished requests by where they wait (otelnames.PathwayEdge, with the
// topic and, when known, the consumer group), and 0 for each place where
// requests waited at an earlier collection and none wait now: a series
// that merely stopped would keep its last value in Prometheus for its
// lookback (5 minutes), and an alert on it would not resolve. Nothing is
// observed when read reports false (the status could not be read).
// Unregister the returned registration to stop.
func RegisterUnfinished(mp metric.MeterProvider, read func(context.Context) (Completeness, bool)) (metric.Registration, error) {
	meter := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	g, err := meter.Int64ObservableGauge(otelnames.MetricRequestsUnfinished, metric.WithUnit(otelnames.MetricRequestsUnfinishedUnit),
		metric.WithDescription("Requests of the origin-time cohorts judged that have not ended (a result, a dead letter or an expiry), by where they wait."))
	if err != nil {
		return nil, fmt.Errorf("unfinished gauge: %w", err)
	}
	var mu sync.Mutex
	seen := map[Waiting]metric.ObserveOption{} // places observed before, Count 0
	reg, err := meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		c, ok := read(ctx)
		if !ok {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		now := map[Waiting]int64{}
		placed := uint64(0)
		for _, w := range c.Waiting {
			placed += w.Count
			k := w
			k.Count = 0
			now[k] += int64(min(w.Count, 1<<62))
		}
		if c.Unfinished > placed { // requests whose place is not known
			now[Waiting{Where: UnknownPlace}] += int64(min(c.Unfinished-placed, 1<<62))
		}
		for k, n := range now {
			attrs, known := seen[k]
			if !known {
				attrs = placeAttrs(k)
				if len(seen) < maxPlaces {
					seen[k] = attrs
				}
			}
			o.ObserveInt64(g, n, attrs)
		}
		for k, attrs := range seen {
			if _, waiting := now[k]; !waiting {
				o.ObserveInt64(g, 0, attrs)
			}
		}
		return nil
	}, g)
	if err != nil {
		return nil, fmt.Errorf("unfinished gauge callback: %w", err)
	}
	return reg, nil
}

// placeAttrs returns the gauge's attributes of a place.
func placeAttrs(w Waiting) metric.ObserveOption {
	attrs := []attribute.KeyValue{otelnames.PathwayEdge.String(w.Where)}
	if w.Topic != "" {
		attrs = append(attrs, semconv.MessagingDestinationName(w.Topic))
	}
	if w.Group != "" {
		attrs = append(attrs, semconv.MessagingConsumerGroupName(w.Group))
	}
	return metric.WithAttributes(attrs...)
}
