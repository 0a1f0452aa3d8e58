// SPDX-License-Identifier: Apache-2.0

package results

import (
	"log/slog"
	"testing"
)

// TestOptionsIgnoreNilAndApplyInOrder: a later option wins, a nil one (or
// a nil argument) changes nothing, and what is unset falls back to the
// globals (docs/ARCHITECTURE.md, "Options").
func TestOptionsIgnoreNilAndApplyInOrder(t *testing.T) {
	first, second := slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler)
	o := newOptions([]Option{nil, WithLogger(first), WithLogger(second), WithLogger(nil), nil})
	if o.logger != second {
		t.Error("the later logger did not win, or nil overrode it")
	}
	if newOptions(nil).logger != slog.Default() {
		t.Error("unset, the logger is not slog.Default()")
	}
}
