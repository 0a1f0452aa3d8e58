// SPDX-License-Identifier: Apache-2.0

package console

import (
	"context"

	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/ops/status"
)

// WithUnfinishedGauge has the console export the gauge of unfinished
// requests (status.RegisterUnfinished) on mp: each collection reads the
// map as an API request does (through its cache, starting the console's
// Kafka clients when idle), so that an alert needs no browser open.
func WithUnfinishedGauge(mp metric.MeterProvider) Option {
	return optionFunc(func(c *collaborators) { c.unfinished = mp })
}

// registerUnfinished registers the gauge when WithUnfinishedGauge asks.
func (c *Console) registerUnfinished() error {
	if c.collab.unfinished == nil {
		return nil
	}
	reg, err := status.RegisterUnfinished(c.collab.unfinished, func(ctx context.Context) (status.Completeness, bool) {
		l, err := c.acquire()
		if err != nil {
			return status.Completeness{}, false
		}
		defer c.release()
		doc := l.pipelineMap(ctx)
		return doc.Completeness, !doc.Updated.IsZero()
	})
	c.gauge = reg
	return err
}
