// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import "go.opentelemetry.io/otel/trace"

// ExemplarFilter decides which measurements of the Metrics histograms
// become exemplars, as OTEL_METRICS_EXEMPLAR_FILTER does for the SDK's
// instruments (tracing.ReadMetricsPreferences reads it).
type ExemplarFilter int

const (
	// ExemplarsTraceBased keeps measurements taken in a sampled span (the
	// specification's default, trace_based).
	ExemplarsTraceBased ExemplarFilter = iota
	// ExemplarsAlwaysOn keeps every measurement (always_on): one outside
	// a sampled span carries the trace of the record's unsampled context,
	// or no trace at all.
	ExemplarsAlwaysOn
	// ExemplarsAlwaysOff keeps none (always_off).
	ExemplarsAlwaysOff
)

// WithExemplarFilter sets which measurements become exemplars. Default:
// ExemplarsTraceBased.
func WithExemplarFilter(f ExemplarFilter) MetricsOption {
	return metricsOptionFunc(func(m *Metrics) { m.exemplars = f })
}

// exemplarContext returns the span context to record a measurement taken
// in sc with: the histograms keep a measurement as an exemplar when its
// context is sampled, so always_on marks it sampled and always_off passes
// none. A nil m records sc.
func (m *Metrics) exemplarContext(sc trace.SpanContext) trace.SpanContext {
	if m == nil {
		return sc
	}
	switch m.exemplars {
	case ExemplarsAlwaysOn:
		return sc.WithTraceFlags(sc.TraceFlags().WithSampled(true))
	case ExemplarsAlwaysOff:
		return trace.SpanContext{}
	}
	return sc
}
