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

// TestCandidatesWithoutVersions: over the static index (no Version
// method), candidates carry no version and no index_freshness, as before.
func TestCandidatesWithoutVersions(t *testing.T) {
	var ix any = smallIndex(t)
	if _, ok := ix.(consumers.Versioner); ok {
		t.Fatal("*search.Index has become a Versioner: this test no longer covers an index without versions")
	}
	outs, _, err := handle(t, smallIndex(t), false, `{"query":"query string","top_k":5}`)
	if err != nil || len(outs) != 1 {
		t.Fatalf("outs %v err %v", outs, err)
	}
	c, err := messages.DecodeCandidates(outs[0].Value)
	if err != nil || len(c.Candidates) == 0 {
		t.Fatalf("candidates %+v err %v", c, err)
	}
	for _, cand := range c.Candidates {
		if cand.Version != "" {
			t.Errorf("candidate %+v has a version", cand)
		}
	}
	if c.IndexFreshness != nil {
		t.Errorf("index_freshness %+v over a static index", c.IndexFreshness)
	}
}

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
