// SPDX-License-Identifier: Apache-2.0

package dlq

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
	o := newOptions([]Option{nil, WithLogger(first), WithLogger(second), WithLogger(nil), WithTracerProvider(tp), WithTracerProvider(nil)})
	if o.logger != second || o.tracerProvider != tp {
		t.Error("the later option did not win, or nil overrode it")
	}
	if u := newOptions(nil); u.logger != slog.Default() || u.tracerProvider != otel.GetTracerProvider() {
		t.Error("unset collaborators are not the globals")
	}
}
