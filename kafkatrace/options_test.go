// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import "testing"

// TestNilOptionIsIgnored: a nil Option or MetricsOption is skipped
// (docs/ARCHITECTURE.md, "Options"), the others apply.
func TestNilOptionIsIgnored(t *testing.T) {
	if tr := New(nil, WithConsumerGroup("g"), nil); tr.group != "g" {
		t.Errorf("group %q, want g", tr.group)
	}
	if m := NewMetrics(nil, WithMaxPathways(3)); m.maxPathways != 3 {
		t.Errorf("max pathways %d, want 3", m.maxPathways)
	}
}
