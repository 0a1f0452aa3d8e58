// SPDX-License-Identifier: Apache-2.0

package enrichment_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/enrichment"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/search"
)

// liveStore is a store that knows versions, as a live index does. Its
// documents can be replaced while a request is handled: afterHighlight,
// when set, replaces them once Highlight has made its snippets, so the
// versions read later differ from what was highlighted.
type liveStore struct {
	mu             sync.Mutex
	docs           map[string]search.Document
	afterHighlight map[string]search.Document
	position       int64
	newest         time.Time
}

func newLiveStore(docs ...search.Document) *liveStore {
	s := &liveStore{docs: map[string]search.Document{}}
	for _, d := range docs {
		s.docs[d.ID] = d
	}
	return s
}

func (s *liveStore) Highlight(_ context.Context, _ string, ids []string, _ int) (map[string]search.Highlighted, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]search.Highlighted{}
	for _, id := range ids {
		if d, ok := s.docs[id]; ok {
			out[id] = search.Highlighted{Document: d, Snippet: "snippet of " + d.Body}
		}
	}
	if s.afterHighlight != nil {
		s.docs, s.afterHighlight = s.afterHighlight, nil
	}
	return out, nil
}

func (s *liveStore) Version(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[id]
	if !ok {
		return "", false
	}
	return d.Hash(), true
}

func (s *liveStore) Freshness() (int64, time.Time, bool) {
	return s.position, s.newest, !s.newest.IsZero()
}

func doc(id, body string) search.Document {
	return search.Document{ID: id, Title: "title of " + body, Body: body}
}

// runEnrichment handles candidates with store and returns the result and
// the load documents span.
func runEnrichment(t *testing.T, store enrichment.Store, c messages.Candidates) (messages.Result, sdktrace.ReadOnlySpan) {
	t.Helper()
	value, err := messages.EncodeCandidates(c)
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	h := enrichment.Handler(store, enrichment.Config{}, consumers.WithTracerProvider(tp))
	outs, err := h(t.Context(), &consumers.Message{Record: &kgo.Record{Key: []byte(c.RequestID), Value: value}, Attempt: 1})
	if err != nil || len(outs) != 1 {
		t.Fatalf("outs %v err %v", outs, err)
	}
	r, err := messages.DecodeResult(outs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.Ended() {
		if s.Name() == otelnames.SpanLoadDocuments {
			return r, s
		}
	}
	t.Fatal("no load documents span")
	return r, nil
}

func attrs(s sdktrace.ReadOnlySpan) map[string]any {
	out := map[string]any{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// staleEvent returns the attributes of the span's stale candidates event.
func staleEvent(s sdktrace.ReadOnlySpan) (map[string]any, bool) {
	for _, ev := range s.Events() {
		if ev.Name == otelnames.EventStaleCandidates {
			out := map[string]any{}
			for _, kv := range ev.Attributes {
				out[string(kv.Key)] = kv.Value.AsInterface()
			}
			return out, true
		}
	}
	return nil, false
}

func byID(r messages.Result) map[string]messages.Document {
	out := map[string]messages.Document{}
	for _, d := range r.Documents {
		out[d.ID] = d
	}
	return out
}

// TestVersionsCheckedAgainstTheStore: over a store that knows versions, a
// candidate at the store's version is returned unmarked with that
// version; one retrieval scored at another version is returned with the
// store's document, snippet and version, marked stale_score; a deleted one
// is left out; one without a version (an old retrieval) gets the version
// loaded, unmarked. The span counts and reports it.
func TestVersionsCheckedAgainstTheStore(t *testing.T) {
	same, oldB, newB, unknown := doc("same", "kept"), doc("b", "before"), doc("b", "after"), doc("u", "unversioned")
	store := newLiveStore(same, newB, unknown)
	r, span := runEnrichment(t, store, messages.Candidates{RequestID: "r1", Query: "q", TopK: 4, Candidates: []messages.Candidate{
		{DocID: "same", Score: 4, Version: same.Hash()},
		{DocID: "b", Score: 3, Version: oldB.Hash()},
		{DocID: "gone", Score: 2, Version: doc("gone", "deleted").Hash()},
		{DocID: "u", Score: 1},
	}})
	got := byID(r)
	if len(got) != 3 {
		t.Fatalf("documents %+v, want same, b and u (gone left out)", r.Documents)
	}
	if d := got["same"]; d.Version != same.Hash() || d.StaleScore || d.Snippet != "snippet of kept" {
		t.Errorf("same version: %+v", d)
	}
	if d := got["b"]; d.Version != newB.Hash() || !d.StaleScore || d.Snippet != "snippet of after" || d.Title != "title of after" {
		t.Errorf("changed version: %+v, want the new version's fields, marked", d)
	}
	if d := got["u"]; d.Version != unknown.Hash() || d.StaleScore {
		t.Errorf("candidate without a version: %+v", d)
	}
	a := attrs(span)
	if a["kretrieve.enrich.missing"] != int64(1) || a["kretrieve.enrich.changed"] != int64(1) || a["kretrieve.enrich.loaded"] != int64(3) {
		t.Errorf("span attributes %v", a)
	}
	if ev, ok := staleEvent(span); !ok || ev["kretrieve.enrich.missing"] != int64(1) || ev["kretrieve.enrich.changed"] != int64(1) {
		t.Errorf("stale candidates event %v, %v", ev, ok)
	}
}

// TestNoStaleEventWhenConsistent: all candidates at the store's versions:
// nothing marked, counts zero, no event.
func TestNoStaleEventWhenConsistent(t *testing.T) {
	a, b := doc("a", "one"), doc("b", "two")
	r, span := runEnrichment(t, newLiveStore(a, b), messages.Candidates{RequestID: "r1", Query: "q", TopK: 2, Candidates: []messages.Candidate{
		{DocID: "a", Score: 2, Version: a.Hash()}, {DocID: "b", Score: 1, Version: b.Hash()},
	}})
	for _, d := range r.Documents {
		if d.StaleScore || d.Version == "" {
			t.Errorf("document %+v", d)
		}
	}
	if at := attrs(span); at["kretrieve.enrich.changed"] != int64(0) || at["kretrieve.enrich.missing"] != int64(0) {
		t.Errorf("span attributes %v", at)
	}
	if _, ok := staleEvent(span); ok {
		t.Error("stale candidates event without stale candidates")
	}
}

// TestVersionIsWhatWasHighlighted: documents replaced between Highlight
// and any later version read cannot make the result lie. The version
// returned is the one highlighted: a candidate scored at it stays
// unmarked even though the store has moved on; a candidate scored at v1
// whose document was v2 when highlighted and is v1 again afterwards (an
// A-B-A change) is marked, with v2; a document deleted right after it
// was highlighted is left out.
func TestVersionIsWhatWasHighlighted(t *testing.T) {
	v1, v2, v3 := doc("x", "one"), doc("x", "two"), doc("x", "three")
	aba1, aba2 := doc("y", "why one"), doc("y", "why two")
	del := doc("z", "deleted next")
	store := newLiveStore(v2, aba2, del)
	store.afterHighlight = map[string]search.Document{"x": v3, "y": aba1}
	r, span := runEnrichment(t, store, messages.Candidates{RequestID: "r1", Query: "q", TopK: 3, Candidates: []messages.Candidate{
		{DocID: "x", Score: 3, Version: v2.Hash()},
		{DocID: "y", Score: 2, Version: aba1.Hash()},
		{DocID: "z", Score: 1, Version: del.Hash()},
	}})
	got := byID(r)
	if d := got["x"]; d.Version != v2.Hash() || d.StaleScore || d.Snippet != "snippet of two" {
		t.Errorf("x: %+v, want v2 unmarked (v1 %s, v3 %s)", d, v1.Hash(), v3.Hash())
	}
	if d := got["y"]; d.Version != aba2.Hash() || !d.StaleScore || d.Snippet != "snippet of why two" {
		t.Errorf("y: %+v, want the highlighted v2, marked", d)
	}
	if _, ok := got["z"]; ok || len(got) != 2 {
		t.Errorf("documents %+v: z was deleted after highlighting", r.Documents)
	}
	if a := attrs(span); a["kretrieve.enrich.missing"] != int64(1) || a["kretrieve.enrich.changed"] != int64(1) {
		t.Errorf("span attributes %v", a)
	}
}

// TestStoreWithoutVersionsAsBefore: a store without the capability
// returns documents without versions or marks, whatever the candidates
// say, and its span has no changed count and no event.
func TestStoreWithoutVersionsAsBefore(t *testing.T) {
	r, span := runEnrichment(t, fakeStore{}, messages.Candidates{RequestID: "r1", Query: "q", TopK: 2, Candidates: []messages.Candidate{
		{DocID: "a", Score: 2, Version: "v1"}, {DocID: "b", Score: 1},
	}})
	if len(r.Documents) != 2 {
		t.Fatalf("documents %+v", r.Documents)
	}
	for _, d := range r.Documents {
		if d.Version != "" || d.StaleScore {
			t.Errorf("document %+v", d)
		}
	}
	if _, has := attrs(span)["kretrieve.enrich.changed"]; has {
		t.Errorf("span attributes %v", attrs(span))
	}
	if _, ok := staleEvent(span); ok || r.IndexFreshness != nil {
		t.Errorf("event %v, index_freshness %+v", ok, r.IndexFreshness)
	}
}

// versionedIndex is the static index with the version capability a live
// index adds: the hash of its stored document.
type versionedIndex struct{ *search.Index }

func (ix versionedIndex) Version(id string) (string, bool) {
	d, ok := ix.Document(id)
	if !ok {
		return "", false
	}
	return d.Hash(), true
}

// TestRealIndexVersionsMatch: over a real index, the version of a loaded
// document is the hash of the document as indexed, so candidates scored
// at it are not marked (the stored document round-trips to the same
// hash).
func TestRealIndexVersionsMatch(t *testing.T) {
	docs := []search.Document{
		{ID: "net/url.ParseQuery", Title: "ParseQuery", Body: "ParseQuery parses the URL-encoded query string.", Kind: "func",
			ImportPath: "net/url", URL: "https://pkg.go.dev/net/url#ParseQuery", Source: "go-stdlib"},
		{ID: "j1", Title: "notes", Body: "a query about strings", Metadata: map[string]string{"team": "search", "empty": ""}},
	}
	ix, err := search.NewMemory(t.Context(), "small", docs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	r, span := runEnrichment(t, versionedIndex{ix}, messages.Candidates{RequestID: "r1", Query: "query string", TopK: 2, Candidates: []messages.Candidate{
		{DocID: docs[0].ID, Score: 2, Version: docs[0].Hash()}, {DocID: docs[1].ID, Score: 1, Version: docs[1].Hash()},
	}})
	got := byID(r)
	for _, d := range docs {
		if g := got[d.ID]; g.Version != d.Hash() || g.StaleScore {
			t.Errorf("%s: %+v, want version %s unmarked", d.ID, g, d.Hash())
		}
	}
	if _, ok := staleEvent(span); ok {
		t.Error("stale candidates event over an unchanged index")
	}
}

// TestIndexFreshnessCarried: the result keeps the candidates'
// index_freshness and adds enrichment's entry after it; a store that
// reports none passes it on unchanged.
func TestIndexFreshnessCarried(t *testing.T) {
	received := messages.IndexFreshness{{Stage: messages.StageRetrieval, Position: 8352, NewestDocumentAgeMS: 1234.5}}
	c := messages.Candidates{RequestID: "r1", Query: "q", TopK: 1, IndexFreshness: received,
		Candidates: []messages.Candidate{{DocID: "a", Score: 1}}}
	store := newLiveStore(doc("a", "body"))
	store.position, store.newest = 8360, time.Now().Add(-2*time.Second)
	r, _ := runEnrichment(t, store, c)
	f := r.IndexFreshness
	if len(f) != 2 || f[0] != received[0] || f[1].Stage != messages.StageEnrichment || f[1].Position != 8360 ||
		f[1].NewestDocumentAgeMS < 2000 || f[1].NewestDocumentAgeMS > 60_000 {
		t.Fatalf("index_freshness %+v", f)
	}
	r, _ = runEnrichment(t, fakeStore{}, c)
	if len(r.IndexFreshness) != 1 || r.IndexFreshness[0] != received[0] {
		t.Fatalf("store without freshness: index_freshness %+v", r.IndexFreshness)
	}
}
