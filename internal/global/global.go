// Package global is the one place where kretrieve's components fall back to
// the process-wide defaults: the OpenTelemetry global tracer provider, meter
// provider and propagator (which package tracing sets) and slog.Default().
//
// It also holds the one option type for collaborators: a component whose
// options are only collaborators declares type Option = global.Option and
// one-line With* constructors, and fills in its Collaborators with New
// (kafkatrace, consumers.Worker and pipeline take more, so they keep a
// sealed Option of their own and fall back through the same functions); no other non-test file calls otel.GetTracerProvider,
// otel.GetMeterProvider or otel.GetTextMapPropagator (TestOnlyHomeOfTheGlobals).
package global

import (
	"cmp"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TracerProvider returns tp, or the global tracer provider when tp is nil.
func TracerProvider(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return otel.GetTracerProvider()
	}
	return tp
}

// MeterProvider returns mp, or the global meter provider when mp is nil.
func MeterProvider(mp metric.MeterProvider) metric.MeterProvider {
	if mp == nil {
		return otel.GetMeterProvider()
	}
	return mp
}

// Propagator returns p, or the global text map propagator when p is nil.
func Propagator(p propagation.TextMapPropagator) propagation.TextMapPropagator {
	if p == nil {
		return otel.GetTextMapPropagator()
	}
	return p
}

// Logger returns l, or slog.Default() when l is nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// Collaborators are the objects a component is handed through its
// options, as New fills them in: never nil.
type Collaborators struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagator     propagation.TextMapPropagator
	Logger         *slog.Logger
}

// Option sets one collaborator. The components declare their Option as
// this type (type Option = global.Option); only their With* constructors
// make one, since its argument's type is internal. A nil Option is
// skipped.
type Option func(*Collaborators)

// WithTracerProvider sets the tracer provider; nil is ignored.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *Collaborators) { c.TracerProvider = cmp.Or(tp, c.TracerProvider) }
}

// WithMeterProvider sets the meter provider; nil is ignored.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *Collaborators) { c.MeterProvider = cmp.Or(mp, c.MeterProvider) }
}

// WithPropagator sets the propagator; nil is ignored.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *Collaborators) { c.Propagator = cmp.Or(p, c.Propagator) }
}

// WithLogger sets the logger; nil is ignored.
func WithLogger(l *slog.Logger) Option {
	return func(c *Collaborators) { c.Logger = cmp.Or(l, c.Logger) }
}

// New applies opts in order and fills in what they leave unset with the
// globals (TracerProvider, MeterProvider, Propagator, Logger).
func New(opts []Option) Collaborators {
	var c Collaborators
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c.Filled()
}

// Filled returns c with what is unset replaced by the globals.
func (c Collaborators) Filled() Collaborators {
	c.TracerProvider, c.MeterProvider = TracerProvider(c.TracerProvider), MeterProvider(c.MeterProvider)
	c.Propagator, c.Logger = Propagator(c.Propagator), Logger(c.Logger)
	return c
}
