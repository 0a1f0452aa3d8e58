// SPDX-License-Identifier: Apache-2.0

package search_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/corpus/corpustest"
	"github.com/kretrieve/kretrieve/search"
)

// liveCorpus returns the demo corpus's package documents, each with two
// member documents (Kind "func", same import path) whose bodies borrow
// words from other packages, so that queries match members through their
// own text and through their package's context.
func liveCorpus(t *testing.T) []search.Document {
	t.Helper()
	pkgs, err := corpustest.DemoDocuments()
	if err != nil {
		t.Fatal(err)
	}
	docs := slices.Clone(pkgs)
	for i, p := range pkgs {
		for j := range 2 {
			other := pkgs[(i*7+j*31+3)%len(pkgs)]
			name := fmt.Sprintf("%s.Func%d", p.ID, j)
			docs = append(docs, search.Document{
				ID:         name,
				Title:      name,
				Kind:       "func",
				ImportPath: p.ID,
				Source:     p.Source,
				Body:       fmt.Sprintf("Func%d works with %s. %s", j, strings.ToLower(other.Title), other.Body),
			})
		}
	}
	return docs
}

// event is one record of a simulated documents topic: an upsert (doc set)
// or a delete of id.
type event struct {
	id  string
	doc *search.Document
}

// liveHistory returns, for each id, the changes a topic would carry for it,
// in order, and the documents left at the end. Documents are upserted at an
// older version (a different first sentence, so a package's context
// changes) before their final one, deleted and upserted again, or deleted
// for good; extra documents come and go.
func liveHistory(rng *rand.Rand, docs []search.Document) (map[string][]event, []search.Document) {
	history := make(map[string][]event)
	var final []search.Document
	older := func(d search.Document, n int) *search.Document {
		d.Body = fmt.Sprintf("Draft %d of %s about %s. %s", n, d.ID, docs[rng.IntN(len(docs))].Title, d.Body)
		return &d
	}
	for _, d := range docs {
		var evs []event
		for n := range rng.IntN(3) {
			evs = append(evs, event{d.ID, older(d, n)})
		}
		if rng.IntN(6) == 0 {
			evs = append(evs, event{id: d.ID})
		}
		if rng.IntN(8) == 0 { // deleted for good
			history[d.ID] = append(evs, event{d.ID, older(d, 9)}, event{id: d.ID})
			continue
		}
		final = append(final, d)
		history[d.ID] = append(evs, event{d.ID, &d})
	}
	for i := range 20 {
		d := older(docs[rng.IntN(len(docs))], i)
		d.ID = fmt.Sprintf("extra/%d", i)
		d.ImportPath = d.ID
		history[d.ID] = []event{{d.ID, d}, {id: d.ID}}
	}
	return history, final
}

// interleave merges the per-id histories into one stream in random order,
// keeping each id's changes in order, as a topic partitioned by id does.
func interleave(rng *rand.Rand, history map[string][]event) []search.Change {
	ids := make([]string, 0, len(history))
	for id := range history {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []search.Change
	for len(ids) > 0 {
		i := rng.IntN(len(ids))
		id := ids[i]
		e := history[id][0]
		out = append(out, search.Change{ID: e.id, Doc: e.doc})
		if history[id] = history[id][1:]; len(history[id]) == 0 {
			ids = slices.Delete(ids, i, i+1)
		}
	}
	return out
}

// applyInBatches applies changes to ix in batches of random sizes (1 to
// 64), each stamped with the position after it.
func applyInBatches(t *testing.T, rng *rand.Rand, ix *search.Index, changes []search.Change) {
	t.Helper()
	for start := 0; start < len(changes); {
		end := min(len(changes), start+1+rng.IntN(64))
		pos := search.Position{Topic: "docs", Offsets: map[int32]int64{0: int64(end)}}
		if _, err := ix.Apply(t.Context(), changes[start:end], pos); err != nil {
			t.Fatalf("Apply(%d..%d): %v", start, end, err)
		}
		start = end
	}
}

// TestApplyEquivalentToNewMemory applies the demo corpus, with members,
// updates and deletes, in random order and random batches, and compares
// the result with NewMemory of the final documents: same documents,
// digest, and for every quality query the same hits in order with the same
// scores.
//
// Scores are compared after compacting the on-disk index into one segment
// (as NewMemory's index of fewer than 1000 documents is): bleve's BM25
// (search/searcher/search_term.go, bm25ScoreMetrics) takes the average
// field length as the sum, over segments, of each segment's term
// dictionary size (terms of deleted documents included) divided by the
// live document count, so until segments merge a term counts once per
// segment holding it. Document frequencies already exclude deleted
// documents. Without Compact the on-disk index usually matches too, but
// only if its background merger happens to have finished. The in-memory
// index is compared on its documents and digest only: scorch never merges
// an in-memory index, and after these batches its scores are about twice
// the reference's, with some hits in another order.
func TestApplyEquivalentToNewMemory(t *testing.T) {
	queries, err := corpus.QualitySet()
	if err != nil {
		t.Fatal(err)
	}
	docs := liveCorpus(t)
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 24))
			history, final := liveHistory(rng, docs)
			changes := interleave(rng, history)
			want, err := search.NewMemory(t.Context(), "want", final)
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()

			disk, err := search.Create(filepath.Join(t.TempDir(), "index"), "live")
			if err != nil {
				t.Fatal(err)
			}
			defer disk.Close()
			mem, err := search.NewMemory(t.Context(), "live", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			applyInBatches(t, rng, disk, changes)
			applyInBatches(t, rng, mem, changes)
			for _, ix := range []*search.Index{disk, mem} {
				sameDocuments(t, ix, want, final)
			}
			if err := search.Compact(t.Context(), disk); err != nil {
				t.Fatal(err)
			}
			compared := 0
			for _, q := range queries {
				if sameHits(t, disk, want, q.Query) {
					compared++
				}
			}
			if compared < len(queries)*3/4 {
				t.Errorf("only %d of %d queries find something", compared, len(queries))
			}
		})
	}
}

// sameDocuments checks that ix holds exactly final, as want does.
func sameDocuments(t *testing.T, ix, want *search.Index, final []search.Document) {
	t.Helper()
	if ix.Len() != len(final) || ix.Digest() != want.Digest() {
		t.Fatalf("Len %d, Digest %v; want %d, %v", ix.Len(), ix.Digest(), len(final), want.Digest())
	}
	for _, d := range final {
		if got, ok := ix.Document(d.ID); !ok || !reflect.DeepEqual(got, d) {
			t.Fatalf("Document(%q) = %+v, %v; want %+v", d.ID, got, ok, d)
		}
	}
}

// sameHits checks that ix and want rank query alike, with equal scores,
// and reports whether want finds anything.
func sameHits(t *testing.T, ix, want *search.Index, query string) bool {
	t.Helper()
	got, err := ix.Search(t.Context(), query, 20)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := want.Search(t.Context(), query, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("%q:\n got %v\nwant %v", query, got[:min(5, len(got))], exp[:min(5, len(exp))])
	}
	return len(exp) > 0
}
