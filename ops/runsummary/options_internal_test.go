// SPDX-License-Identifier: Apache-2.0

package runsummary

import "testing"

// TestNilOptionIsIgnored: a nil Option is skipped (docs/ARCHITECTURE.md,
// "Options"), the others apply.
func TestNilOptionIsIgnored(t *testing.T) {
	r := NewRecorder("request", "outcome", nil, WithMaxSpansPerTrace(7), nil)
	if r.cfg.maxSpans != 7 {
		t.Errorf("max spans %d, want 7", r.cfg.maxSpans)
	}
}
