// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric/noop"
)

// TestOptionsIgnoreNilAndApplyInOrder: a later option wins, a nil one (or
// a nil argument) changes nothing, and what is unset falls back to the
// globals (docs/ARCHITECTURE.md, "Options").
func TestOptionsIgnoreNilAndApplyInOrder(t *testing.T) {
	first, second := slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler)
	mp := noop.NewMeterProvider()
	o := newOptions([]Option{nil, WithLogger(first), WithLogger(second), WithLogger(nil), WithMeterProvider(mp), WithMeterProvider(nil)})
	if o.logger != second || o.meterProvider != mp {
		t.Error("the later option did not win, or nil overrode it")
	}
	if u := newOptions(nil); u.logger != slog.Default() || u.meterProvider != otel.GetMeterProvider() {
		t.Error("unset collaborators are not the globals")
	}
}
