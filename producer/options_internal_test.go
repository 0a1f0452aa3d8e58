// SPDX-License-Identifier: Apache-2.0

package producer

import (
	"testing"

	"go.opentelemetry.io/otel"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestOptionsIgnoreNilAndApplyInOrder: a later option wins, a nil one (or
// a nil argument) changes nothing, and what is unset falls back to the
// globals (docs/ARCHITECTURE.md, "Options").
func TestOptionsIgnoreNilAndApplyInOrder(t *testing.T) {
	tp := tracenoop.NewTracerProvider()
	o := newOptions([]Option{nil, WithTracerProvider(tp), WithTracerProvider(nil), nil})
	if o.tracerProvider != tp {
		t.Error("the tracer provider set was lost")
	}
	if newOptions(nil).tracerProvider != otel.GetTracerProvider() {
		t.Error("unset, the tracer provider is not the global one")
	}
}
