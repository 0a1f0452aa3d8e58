// Package global is the one place where kretrieve's components fall back to
// the process-wide defaults: the OpenTelemetry global tracer provider, meter
// provider and propagator (which package tracing sets) and slog.Default().
//
// Every component takes its collaborators as sealed With* options that
// ignore nil, and fills in the ones left unset in its unexported newConfig
// with these functions; no other non-test file calls otel.GetTracerProvider,
// otel.GetMeterProvider or otel.GetTextMapPropagator (TestOnlyHomeOfTheGlobals).
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
