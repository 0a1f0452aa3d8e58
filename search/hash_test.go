// SPDX-License-Identifier: Apache-2.0

package search_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kretrieve/kretrieve/search"
)

func TestHashIsTheContent(t *testing.T) {
	a := search.Document{ID: "a", Title: "T", Body: "b", Metadata: map[string]string{"x": "1", "y": "2"}}
	b := search.Document{ID: "a", Title: "T", Body: "b", Metadata: map[string]string{"y": "2", "x": "1"}}
	if a.Hash() != b.Hash() {
		t.Errorf("equal documents hash differently: %s, %s", a.Hash(), b.Hash())
	}
	if len(a.Hash()) != 32 {
		t.Errorf("Hash() = %q, want 32 hex digits", a.Hash())
	}
	for _, c := range []search.Document{
		{ID: "b", Title: "T", Body: "b", Metadata: a.Metadata},
		{ID: "a", Title: "T", Body: "b "},
		{ID: "a", Title: "T", Body: "b", Metadata: map[string]string{"x": "1", "y": "3"}},
		{ID: "a", Title: "Tb", Body: ""},
	} {
		if c.Hash() == a.Hash() {
			t.Errorf("%+v hashes like %+v", c, a)
		}
	}
}

func TestDigestIsOrderFree(t *testing.T) {
	type pair struct{ id, v string }
	var pairs []pair
	for i := range 100 {
		pairs = append(pairs, pair{string(rune('a'+i%26)) + string(rune('0'+i/26)), search.Document{ID: "x", Body: string(rune(i))}.Hash()})
	}
	var want search.Digest
	for _, p := range pairs {
		want.Add(p.id, p.v)
	}
	var got search.Digest
	rand.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	for _, p := range pairs {
		got.Add(p.id, p.v)
		got.Add("extra", p.v)
		got.Remove("extra", p.v)
	}
	if got != want {
		t.Errorf("digest depends on order: %v, want %v", got, want)
	}
	got.Remove(pairs[0].id, pairs[0].v)
	got.Add(pairs[0].id, "another version")
	if got == want || got.Count != want.Count {
		t.Errorf("a changed version left the digest as it was: %v", got)
	}
	// The id and the version are not one concatenated string.
	var x, y search.Digest
	x.Add("ab", "c")
	y.Add("a", "bc")
	if x == y {
		t.Error("(ab, c) and (a, bc) have the same digest")
	}
	if (search.Digest{}).String() != "00000000000000000000000000000000/0" {
		t.Errorf("empty digest %q", search.Digest{}.String())
	}
}
