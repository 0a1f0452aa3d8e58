package pipeline

import (
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// Option hands New one of the pipeline's collaborators.
type Option interface{ apply(*Pipeline) }

type optionFunc func(*Pipeline)

func (f optionFunc) apply(p *Pipeline) { f(p) }

// WithTracerProvider sets the tracer provider of every span the pipeline
// records; nil is ignored. Default: the global tracer provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(p *Pipeline) {
		if tp != nil {
			p.tp = tp
		}
	})
}

// WithMeterProvider sets the meter provider of the Kafka clients' and the
// collector's metrics; nil is ignored. Default: the global meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(p *Pipeline) {
		if mp != nil {
			p.mp = mp
		}
	})
}

// WithPropagator sets the propagator of the trace context in record
// headers and HTTP requests; nil is ignored. Default: the global
// propagator.
func WithPropagator(prop propagation.TextMapPropagator) Option {
	return optionFunc(func(p *Pipeline) {
		if prop != nil {
			p.prop = prop
		}
	})
}

// WithLogger sets the logger of every component; nil is ignored.
// Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(p *Pipeline) {
		if l != nil {
			p.logger = l
		}
	})
}

// WithMetrics sets the messaging metrics every Kafka client records into;
// register them with the meter provider's readers through
// tracing.NewMetricsProducer (sdkmetric.WithProducer, or
// tracing.WithMetricProducer). Default: no messaging metrics.
func WithMetrics(m *kafkatrace.Metrics) Option {
	return optionFunc(func(p *Pipeline) { p.metrics = m })
}
