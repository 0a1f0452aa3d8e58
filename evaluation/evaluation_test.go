// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"context"
	"math"
	"testing"

	"github.com/kretrieve/kretrieve/search"
)

// fakeIndex ranks fixed lists, to test the measures themselves.
type fakeIndex map[string][]string

func (f fakeIndex) Search(_ context.Context, q string, k int) ([]search.Hit, error) {
	var hits []search.Hit
	for i, id := range f[q] {
		if i == k {
			break
		}
		hits = append(hits, search.Hit{ID: id, Score: float64(10 - i)})
	}
	return hits, nil
}

func (f fakeIndex) Document(id string) (search.Document, bool) {
	return search.Document{ID: id, Title: id, Body: "body of " + id}, true
}

func TestMeasures(t *testing.T) {
	ix := fakeIndex{
		"a": {"x", "a1", "y"},      // first relevant at rank 2; 1 of 2 relevant found
		"b": {"b1", "b2"},          // rank 1; 2 of 2
		"c": {"p", "q", "r", "c1"}, // rank 4, but k=3 cuts it: miss
	}
	queries := []Query{{"a", []string{"a1", "a2"}}, {"b", []string{"b1", "b2"}}, {"c", []string{"c1"}}}
	m, err := Retrieval(t.Context(), ix, queries, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := (0.5 + 1 + 0) / 3; math.Abs(m.Recall-want) > 1e-9 {
		t.Errorf("recall %v, want %v", m.Recall, want)
	}
	if want := (0.5 + 1 + 0) / 3; math.Abs(m.MRR-want) > 1e-9 {
		t.Errorf("mrr %v, want %v", m.MRR, want)
	}
	if len(m.Misses) != 1 || m.Misses[0] != "c" {
		t.Errorf("misses %v", m.Misses)
	}
}
