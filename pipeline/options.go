package pipeline

import (
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// Option hands New one of the pipeline's collaborators. Only the With*
// functions make one.
type Option interface{ apply(*Pipeline) }

// collaborator is an option every component takes.
type collaborator global.Option

func (o collaborator) apply(p *Pipeline) { o(&p.collab) }

// metricsOption sets the messaging metrics.
type metricsOption struct{ m *kafkatrace.Metrics }

func (o metricsOption) apply(p *Pipeline) { p.metrics = o.m }

// WithTracerProvider sets the tracer provider of every span the pipeline
// records; nil is ignored. Default: the global tracer provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return collaborator(global.WithTracerProvider(tp))
}

// WithMeterProvider sets the meter provider of the Kafka clients' and the
// collector's metrics; nil is ignored. Default: the global meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return collaborator(global.WithMeterProvider(mp))
}

// WithPropagator sets the propagator of the trace context in record
// headers and HTTP requests; nil is ignored. Default: the global
// propagator.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return collaborator(global.WithPropagator(p))
}

// WithLogger sets the logger of every component; nil is ignored.
// Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return collaborator(global.WithLogger(l)) }

// WithMetrics sets the messaging metrics every Kafka client records into;
// register them with the meter provider's readers through
// tracing.NewMetricsProducer (sdkmetric.WithProducer, or
// tracing.WithMetricProducer). Default: no messaging metrics.
func WithMetrics(m *kafkatrace.Metrics) Option { return metricsOption{m} }
