// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import "go.opentelemetry.io/otel/metric"

// kotelBytes is the unit kotel gives its byte counters ("by"); UCUM, which
// OpenTelemetry's units follow, spells bytes "By", and only that spelling
// becomes the _bytes suffix of Prometheus names (kotel's unit gave
// messaging_kafka_read_bytes_count_by_total).
const (
	kotelBytes = "by"
	ucumBytes  = "By"
)

// ucumMeterProvider hands out meters whose Int64Counters with kotel's
// byte unit get the UCUM one: the one place kotel's unit is corrected,
// for every exporter, without touching the SDK.
type ucumMeterProvider struct{ metric.MeterProvider }

// Meter returns the wrapped provider's meter with the unit corrected.
func (p ucumMeterProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return ucumMeter{Meter: p.MeterProvider.Meter(name, opts...)}
}

// ucumMeter is a meter whose Int64Counter corrects the byte unit; kotel
// creates no other instrument with one.
type ucumMeter struct{ metric.Meter }

// Int64Counter creates the counter, with unit "By" where "by" was asked.
func (m ucumMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	if metric.NewInt64CounterConfig(opts...).Unit() == kotelBytes {
		opts = append(opts, metric.WithUnit(ucumBytes))
	}
	return m.Meter.Int64Counter(name, opts...)
}
