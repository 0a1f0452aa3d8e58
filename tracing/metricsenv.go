// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"fmt"
	"strings"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// The metrics exporter's standard variables that the Go SDK's OTLP
// exporter does not read itself.
const (
	envMetricsTemporality = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
	envHistogramAgg       = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
	// envExemplarFilter is read by the SDK for its own instruments; this
	// package reads it for kretrieve's histograms (kafkatrace.Metrics).
	envExemplarFilter = "OTEL_METRICS_EXEMPLAR_FILTER"
)

// MetricsPreferences are the metric exporter preferences of the
// environment.
type MetricsPreferences struct {
	// Temporality of counters and histograms: CumulativeTemporality
	// (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE unset or
	// "cumulative") or DeltaTemporality ("delta" or "lowmemory", which
	// differ only for up-down counters and asynchronous counters, kept
	// cumulative by "lowmemory" as the specification says).
	Temporality metricdata.Temporality
	// lowMemory is the "lowmemory" preference.
	lowMemory bool
	// ExplicitHistograms is true when
	// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION is
	// "explicit_bucket_histogram": histograms kretrieve would record as
	// base-2 exponential ones (the pathway latency) use explicit buckets.
	ExplicitHistograms bool
	// exponential is "base2_exponential_bucket_histogram": the SDK's
	// histogram instruments become exponential too.
	exponential bool
	// ExemplarFilter is OTEL_METRICS_EXEMPLAR_FILTER for kretrieve's own
	// histograms (kafkatrace.WithExemplarFilter): trace_based (unset, the
	// default), always_on or always_off, as the SDK's instruments follow
	// it.
	ExemplarFilter kafkatrace.ExemplarFilter
}

// ReadMetricsPreferences reads the metric exporter preferences from
// getenv. An unknown value is an error naming the variable; the
// preferences returned with it are the defaults for that variable.
func ReadMetricsPreferences(getenv func(string) string) (MetricsPreferences, error) {
	p := MetricsPreferences{Temporality: metricdata.CumulativeTemporality}
	var errs []string
	switch v := strings.ToLower(lookup(getenv, envMetricsTemporality)); v {
	case "", "cumulative":
	case "delta":
		p.Temporality = metricdata.DeltaTemporality
	case "lowmemory":
		p.Temporality, p.lowMemory = metricdata.DeltaTemporality, true
	default:
		errs = append(errs, fmt.Sprintf("%s=%q: want cumulative, delta or lowmemory", envMetricsTemporality, v))
	}
	switch v := strings.ToLower(lookup(getenv, envHistogramAgg)); v {
	case "":
	case "explicit_bucket_histogram":
		p.ExplicitHistograms = true
	case "base2_exponential_bucket_histogram":
		p.exponential = true
	default:
		errs = append(errs, fmt.Sprintf("%s=%q: want explicit_bucket_histogram or base2_exponential_bucket_histogram", envHistogramAgg, v))
	}
	switch v := strings.ToLower(lookup(getenv, envExemplarFilter)); v {
	case "", "trace_based":
	case "always_on":
		p.ExemplarFilter = kafkatrace.ExemplarsAlwaysOn
	case "always_off":
		p.ExemplarFilter = kafkatrace.ExemplarsAlwaysOff
	default:
		errs = append(errs, fmt.Sprintf("%s=%q: want trace_based, always_on or always_off", envExemplarFilter, v))
	}
	if len(errs) > 0 {
		return p, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return p, nil
}

// temporalitySelector is the SDK reader's selector for p, as the
// specification defines the three preferences.
func (p MetricsPreferences) temporalitySelector() sdkmetric.TemporalitySelector {
	if p.Temporality != metricdata.DeltaTemporality {
		return sdkmetric.DefaultTemporalitySelector
	}
	return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
		switch k {
		case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
			return metricdata.DeltaTemporality
		case sdkmetric.InstrumentKindObservableCounter:
			if !p.lowMemory {
				return metricdata.DeltaTemporality
			}
		}
		return metricdata.CumulativeTemporality
	}
}

// aggregationSelector is the SDK reader's default aggregation for p.
func (p MetricsPreferences) aggregationSelector() sdkmetric.AggregationSelector {
	if !p.exponential {
		return sdkmetric.DefaultAggregationSelector
	}
	return func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
		if k == sdkmetric.InstrumentKindHistogram {
			return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
		}
		return sdkmetric.DefaultAggregationSelector(k)
	}
}
