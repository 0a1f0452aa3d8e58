// SPDX-License-Identifier: Apache-2.0

// Package global is the one place where kretrieve's components fall back to
// the process-wide defaults: the OpenTelemetry global tracer provider, meter
// provider and propagator (which package tracing sets) and slog.Default().
// No other non-test file calls otel.GetTracerProvider,
// otel.GetMeterProvider or otel.GetTextMapPropagator
// (TestOnlyHomeOfTheGlobals).
//
// It declares no option type: each component declares its own sealed
// Option (see "Options" in docs/ARCHITECTURE.md) and falls back through TracerProvider,
// MeterProvider, Propagator and Logger; one that takes all four
// collaborators may keep them in a Collaborators and call Filled.
package global

import (
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
// options; Filled makes them never nil.
type Collaborators struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagator     propagation.TextMapPropagator
	Logger         *slog.Logger
}

// Filled returns c with what is unset replaced by the globals.
func (c Collaborators) Filled() Collaborators {
	c.TracerProvider, c.MeterProvider = TracerProvider(c.TracerProvider), MeterProvider(c.MeterProvider)
	c.Propagator, c.Logger = Propagator(c.Propagator), Logger(c.Logger)
	return c
}

// Apply applies opts to t in order, skipping nil ones: the loop behind
// every package's options. apply is the package's own method expression
// (Option.apply), so that each package keeps its sealed Option type and
// another package's option does not compile.
func Apply[O comparable, T any](t *T, opts []O, apply func(O, *T)) {
	var none O
	for _, o := range opts {
		if o != none {
			apply(o, t)
		}
	}
}
