// SPDX-License-Identifier: Apache-2.0

package search

import "testing"

// TestNilOptionIsIgnored: a nil Option is skipped (docs/ARCHITECTURE.md,
// "Options"), the others apply.
func TestNilOptionIsIgnored(t *testing.T) {
	if c := newConfig([]Option{nil, WithBatchSize(5), nil}); c.batchSize != 5 {
		t.Errorf("batch size %d, want 5", c.batchSize)
	}
}
