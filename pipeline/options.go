// SPDX-License-Identifier: Apache-2.0

package pipeline

import (
	"cmp"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// Option configures New: one of the pipeline's collaborators. Only this
// package's With* functions make one; a nil Option is ignored.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options are a Pipeline's collaborators, which every component takes,
// and its messaging metrics.
type options struct {
	collab  global.Collaborators
	metrics *kafkatrace.Metrics
}

// newOptions applies opts in order and falls back to the globals for the
// collaborators they leave unset.
func newOptions(opts []Option) options {
	var o options
	global.Apply(&o, opts, Option.apply)
	o.collab = o.collab.Filled()
	return o
}

// WithTracerProvider sets the tracer provider of every span the pipeline
// records; nil is ignored. Default: the global tracer provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(o *options) { o.collab.TracerProvider = cmp.Or(tp, o.collab.TracerProvider) })
}

// WithMeterProvider sets the meter provider of the Kafka clients' and the
// collector's metrics; nil is ignored. Default: the global meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(o *options) { o.collab.MeterProvider = cmp.Or(mp, o.collab.MeterProvider) })
}

// WithPropagator sets the propagator of the trace context in record
// headers and HTTP requests; nil is ignored. Default: the global
// propagator.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(o *options) { o.collab.Propagator = cmp.Or(p, o.collab.Propagator) })
}

// WithLogger sets the logger of every component; nil is ignored.
// Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(o *options) { o.collab.Logger = cmp.Or(l, o.collab.Logger) })
}

// WithMetrics sets the messaging metrics every Kafka client records into;
// register them with the meter provider's readers through
// tracing.NewMetricsProducer (sdkmetric.WithProducer, or
// tracing.WithMetricProducer). Default: no messaging metrics.
func WithMetrics(m *kafkatrace.Metrics) Option {
	return optionFunc(func(o *options) { o.metrics = m })
}
