// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/otelnames"
)

// healthGauges are the gauges of a consumer groups' Monitor about the
// lag's health.
type healthGauges struct {
	status   metric.Int64ObservableGauge
	velocity metric.Float64ObservableGauge
	drain    metric.Float64ObservableGauge
	headroom metric.Float64ObservableGauge
}

// register creates the gauges on meter and returns instruments with them
// added.
func (g *healthGauges) register(meter metric.Meter, instruments []metric.Observable) ([]metric.Observable, error) {
	var err error
	if g.status, err = meter.Int64ObservableGauge(otelnames.MetricLagStatus, metric.WithUnit(otelnames.MetricLagStatusUnit),
		metric.WithDescription("Health of a consumer group's lag on a partition over a window: 0 ok, 1 warn, 2 stall, 3 stop, 4 rewind.")); err != nil {
		return nil, fmt.Errorf("lag status gauge: %w", err)
	}
	if g.velocity, err = meter.Float64ObservableGauge(otelnames.MetricLagVelocity, metric.WithUnit(otelnames.MetricLagVelocityUnit),
		metric.WithDescription("Change of a consumer group's lag on a partition over a window; negative when it drains.")); err != nil {
		return nil, fmt.Errorf("lag velocity gauge: %w", err)
	}
	if g.drain, err = meter.Float64ObservableGauge(otelnames.MetricLagDrain, metric.WithUnit(otelnames.MetricLagSecondsUnit),
		metric.WithDescription("Estimated time for a consumer group to drain its lag on a partition at its current velocity, while it drains.")); err != nil {
		return nil, fmt.Errorf("lag drain gauge: %w", err)
	}
	if g.headroom, err = meter.Float64ObservableGauge(otelnames.MetricRetentionHeadroom, metric.WithUnit(otelnames.MetricLagSecondsUnit),
		metric.WithDescription("Time before the oldest record a consumer group has yet to consume on a partition is due for deletion by retention.ms.")); err != nil {
		return nil, fmt.Errorf("retention headroom gauge: %w", err)
	}
	return append(instruments, g.status, g.velocity, g.drain, g.headroom), nil
}

// observe reports h's known values.
func (g *healthGauges) observe(o metric.Observer, h Health, attrs metric.ObserveOption) {
	if h.Status != StatusUnknown {
		o.ObserveInt64(g.status, int64(h.Status.Code()), attrs)
	}
	if h.VelocityKnown {
		o.ObserveFloat64(g.velocity, h.Velocity, attrs)
	}
	if h.Drain >= 0 {
		o.ObserveFloat64(g.drain, h.Drain, attrs)
	}
	if h.HeadroomKnown {
		o.ObserveFloat64(g.headroom, h.Headroom, attrs)
	}
}

// retention returns the retention of the topics of lags, from m's cache;
// a failure is logged (at warn the first time, at debug after) and leaves
// the headroom of the topics concerned unknown. A Reader's Monitor, which
// exports no headroom, has none.
func (m *Monitor) retention(ctx context.Context, lags []PartitionLag) map[string]time.Duration {
	if m.retentions == nil {
		return nil
	}
	var topics []string
	for _, l := range lags {
		if l.Topic != "" && !slices.Contains(topics, l.Topic) {
			topics = append(topics, l.Topic)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	out, err := m.retentions.Get(ctx, topics)
	if err != nil && ctx.Err() == nil {
		log := m.logger.DebugContext
		if !m.retentionLogged {
			m.retentionLogged, log = true, m.logger.WarnContext
		}
		log(ctx, "retention of topics not described: their retention headroom is unknown", "err", err)
	}
	return out
}
