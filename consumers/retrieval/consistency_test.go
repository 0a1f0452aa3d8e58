// SPDX-License-Identifier: Apache-2.0

package retrieval_test

import (
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/retrieval"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// liveSearcher is a fakeSearcher with the optional capabilities of a live
// index: document versions and freshness.
type liveSearcher struct {
	fakeSearcher
	versions map[string]string
	position int64
	newest   time.Time
}

func (s liveSearcher) Version(id string) (string, bool) {
	v, ok := s.versions[id]
	return v, ok
}

func (s liveSearcher) Freshness() (int64, time.Time, bool) {
	return s.position, s.newest, !s.newest.IsZero()
}

var (
	_ consumers.Versioner         = liveSearcher{}
	_ consumers.FreshnessReporter = liveSearcher{}
)

// TestCandidatesNameVersions: over an index that knows versions, each
// candidate names its document's version, and a hit deleted before its
// version was read is left out.
func TestCandidatesNameVersions(t *testing.T) {
	s := liveSearcher{
		fakeSearcher: fakeSearcher{hits: []search.Hit{{ID: "a", Score: 3}, {ID: "gone", Score: 2}, {ID: "b", Score: 1}}},
		versions:     map[string]string{"a": "va", "b": "vb"},
	}
	outs, _, err := handle(t, s, false, `{"query":"q","top_k":5}`)
	if err != nil || len(outs) != 1 {
		t.Fatalf("outs %v err %v", outs, err)
	}
	c, err := messages.DecodeCandidates(outs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	want := []messages.Candidate{{DocID: "a", Score: 3, Version: "va"}, {DocID: "b", Score: 1, Version: "vb"}}
	if len(c.Candidates) != 2 || c.Candidates[0] != want[0] || c.Candidates[1] != want[1] {
		t.Fatalf("candidates %+v, want %+v", c.Candidates, want)
	}
}

// TestCandidatesWithoutVersions: over a searcher without versions,
// candidates carry no version and no index_freshness, as before; over the
// real index (which stores each document's version), each candidate names
// the version of the document found.
func TestCandidatesWithoutVersions(t *testing.T) {
	ix := smallIndex(t)
	for _, c := range []struct {
		name     string
		s        retrieval.Searcher
		versions bool
	}{{"no Version method", noVersions{ix}, false}, {"search.Index", ix, true}} {
		if _, ok := c.s.(consumers.Versioner); ok != c.versions {
			t.Fatalf("%s: Versioner %v, want %v", c.name, ok, c.versions)
		}
		outs, _, err := handle(t, c.s, false, `{"query":"query string","top_k":5}`)
		if err != nil || len(outs) != 1 {
			t.Fatalf("%s: outs %v err %v", c.name, outs, err)
		}
		cands, err := messages.DecodeCandidates(outs[0].Value)
		if err != nil || len(cands.Candidates) == 0 {
			t.Fatalf("%s: candidates %+v err %v", c.name, cands, err)
		}
		for _, cand := range cands.Candidates {
			want := ""
			if c.versions {
				d, _ := ix.Document(cand.DocID)
				want = d.Hash()
			}
			if cand.Version != want {
				t.Errorf("%s: candidate %+v: version %q, want %q", c.name, cand, cand.Version, want)
			}
		}
		if cands.IndexFreshness != nil {
			t.Errorf("%s: index_freshness %+v from an index that reports none", c.name, cands.IndexFreshness)
		}
	}
}

// noVersions hides the Version method of the searcher it wraps.
type noVersions struct{ retrieval.Searcher }

// TestCandidatesCarryIndexFreshness: a searcher that reports its freshness
// stamps the candidates with the stage's entry; one that has nothing to
// report yet stamps none.
func TestCandidatesCarryIndexFreshness(t *testing.T) {
	s := liveSearcher{fakeSearcher: fakeSearcher{hits: []search.Hit{{ID: "a", Score: 1}}}, versions: map[string]string{"a": "va"},
		position: 8352, newest: time.Now().Add(-1500 * time.Millisecond)}
	outs, _, err := handleWith(t.Context(), s, retrieval.Config{Stage: "retrieval-live"}, `{"query":"q"}`)
	if err != nil {
		t.Fatal(err)
	}
	c, err := messages.DecodeCandidates(outs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	f := c.IndexFreshness
	if len(f) != 1 || f[0].Stage != "retrieval-live" || f[0].Position != 8352 || f[0].NewestDocumentAgeMS < 1500 || f[0].NewestDocumentAgeMS > 60_000 {
		t.Fatalf("index_freshness %+v", f)
	}
	s.newest = time.Time{}
	outs, _, err = handle(t, s, false, `{"query":"q"}`)
	if err != nil {
		t.Fatal(err)
	}
	if c, err = messages.DecodeCandidates(outs[0].Value); err != nil || c.IndexFreshness != nil {
		t.Fatalf("nothing to report: index_freshness %+v, %v", c.IndexFreshness, err)
	}
}
