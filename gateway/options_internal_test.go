// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestOptionsIgnoreNilAndApplyInOrder: a later option wins, a nil one (or
// a nil argument) changes nothing, and what is unset falls back to the
// globals (docs/ARCHITECTURE.md, "Options").
func TestOptionsIgnoreNilAndApplyInOrder(t *testing.T) {
	first, second := slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler)
	tp := tracenoop.NewTracerProvider()
	c := newConfig(Config{}, []Option{nil, WithLogger(first), WithLogger(second), WithLogger(nil), WithTracerProvider(tp), WithTracerProvider(nil)})
	if c.Logger != second || c.TracerProvider != tp {
		t.Error("the later option did not win, or nil overrode it")
	}
	if c.MeterProvider != otel.GetMeterProvider() || c.Propagator != otel.GetTextMapPropagator() {
		t.Error("unset collaborators are not the globals")
	}
}
