// SPDX-License-Identifier: Apache-2.0

package search

import (
	"fmt"
	"sync"
	"testing"
)

// TestVersionSeesEveryApply reads every document's version (so that each
// is cached), then changes, deletes and adds documents with Apply: Version
// answers what the index holds after each Apply, as a read of the stored
// document does.
func TestVersionSeesEveryApply(t *testing.T) {
	docs := smallDocs(t)
	ix := mustMemory(t, "small", docs)
	for _, d := range docs {
		if v, ok := ix.Version(d.ID); !ok || v != d.Hash() {
			t.Fatalf("Version(%q) = %q, %v; want %q", d.ID, v, ok, d.Hash())
		}
	}
	changed, gone, fresh := docs[0], docs[1], Document{ID: "fresh", Title: "Fresh", Body: "okapis"}
	changed.Body += " zebras"
	pos := Position{Topic: "docs", Offsets: map[int32]int64{0: 1}}
	mustApply(t, ix, []Change{{ID: changed.ID, Doc: &changed}, {ID: gone.ID}, {ID: fresh.ID, Doc: &fresh}}, pos)
	for id, want := range map[string]string{changed.ID: changed.Hash(), gone.ID: "", fresh.ID: fresh.Hash(), docs[2].ID: docs[2].Hash()} {
		v, ok := ix.Version(id)
		if v != want || ok != (want != "") {
			t.Errorf("after Apply, Version(%q) = %q, %v; want %q", id, v, ok, want)
		}
		if stored := uncachedVersion(ix, id); stored != want {
			t.Errorf("after Apply, stored version of %q = %q; want %q", id, stored, want)
		}
	}
}

// TestVersionDuringApply reads versions while Apply changes the same
// document again and again: once the Applies are done, Version answers the
// last one's version, never one that an Apply replaced.
func TestVersionDuringApply(t *testing.T) {
	docs := smallDocs(t)
	ix := mustMemory(t, "small", docs)
	doc := docs[0]
	const applies = 30
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					ix.Version(doc.ID)
				}
			}
		})
	}
	var last Document
	for i := range applies {
		last = doc
		last.Body = fmt.Sprintf("%s version %d", doc.Body, i)
		mustApply(t, ix, []Change{{ID: last.ID, Doc: &last}}, Position{Topic: "docs", Offsets: map[int32]int64{0: int64(i + 1)}})
		if v, _ := ix.Version(doc.ID); v != last.Hash() {
			t.Fatalf("after Apply %d, Version = %q; want %q", i, v, last.Hash())
		}
	}
	close(done)
	wg.Wait()
	if v, _ := ix.Version(doc.ID); v != last.Hash() {
		t.Errorf("Version = %q; want the last Apply's %q", v, last.Hash())
	}
}

// TestVersionCacheBound: past maxCachedVersions the cache starts again,
// and a put from before an invalidation is not kept.
func TestVersionCacheBound(t *testing.T) {
	var c versionCache
	_, gen, _ := c.get("x")
	for i := range maxCachedVersions + 1 {
		c.put(fmt.Sprint(i), "v", gen)
	}
	if n := len(c.versions); n != 1 {
		t.Errorf("%d versions cached past the bound, want 1", n)
	}
	c.invalidate()
	c.put("late", "old", gen)
	if v, _, ok := c.get("late"); ok {
		t.Errorf("a version read before the invalidation was kept: %q", v)
	}
}

// uncachedVersion reads id's stored version from the index itself.
func uncachedVersion(ix *Index, id string) string {
	d, err := ix.idx.Document(id)
	if err != nil || d == nil {
		return ""
	}
	_, v := fromStored(d)
	return v
}

// TestHighlightCarriesVersion: each document Highlight returns, whether its
// body matched (a highlighted fragment) or not (the start of its body),
// comes with its stored version, which is its Hash.
func TestHighlightCarriesVersion(t *testing.T) {
	docs := smallDocs(t)
	ix := mustMemory(t, "small", docs)
	hits, err := ix.Search(t.Context(), docs[0].Title, 3)
	if err != nil || len(hits) == 0 {
		t.Fatalf("Search: %v, %d hits", err, len(hits))
	}
	ids := ids(hits)
	for _, d := range docs[len(docs)-3:] {
		ids = append(ids, d.ID)
	}
	out, err := ix.Highlight(t.Context(), docs[0].Title, ids, 80)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(ids) {
		t.Fatalf("%d documents highlighted, want %d", len(out), len(ids))
	}
	for id, h := range out {
		if h.Version == "" || h.Version != h.Document.Hash() {
			t.Errorf("%s: Version %q, want its Hash %q", id, h.Version, h.Document.Hash())
		}
	}
}
