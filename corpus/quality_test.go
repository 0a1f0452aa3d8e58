// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"slices"
	"testing"
)

func TestQualitySet(t *testing.T) {
	qs, err := QualitySet()
	if err != nil {
		t.Fatalf("QualitySet: %v", err)
	}
	if len(qs) < 60 {
		t.Errorf("got %d queries, want at least 60", len(qs))
	}

	byID := stdlibByID(t)
	seen := make(map[string]bool)
	for _, q := range qs {
		t.Run(q.Query, func(t *testing.T) {
			if seen[q.Query] {
				t.Error("duplicate query")
			}
			seen[q.Query] = true
			if len(q.Relevant) < 1 || len(q.Relevant) > 3 {
				t.Errorf("%d relevant IDs, want 1 to 3", len(q.Relevant))
			}
			if len(slices.Compact(slices.Sorted(slices.Values(q.Relevant)))) != len(q.Relevant) {
				t.Errorf("duplicate relevant IDs %q", q.Relevant)
			}
			for _, id := range q.Relevant {
				if _, ok := byID[id]; !ok {
					t.Errorf("relevant ID %q is not in the Go corpus", id)
				}
			}
		})
	}
}

func TestQualitySetFreshCopy(t *testing.T) {
	a, err := QualitySet()
	if err != nil {
		t.Fatal(err)
	}
	a[0].Relevant[0] = "changed"
	b, err := QualitySet()
	if err != nil {
		t.Fatal(err)
	}
	if b[0].Relevant[0] == "changed" {
		t.Error("QualitySet returned shared data")
	}
}
