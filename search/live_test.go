// SPDX-License-Identifier: Apache-2.0

package search

import (
	"context"
	"errors"
	"fmt"
	"html"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// upserts returns an upsert Change for each of docs.
func upserts(docs []Document) []Change {
	out := make([]Change, len(docs))
	for i := range docs {
		out[i] = Change{ID: docs[i].ID, Doc: &docs[i]}
	}
	return out
}

// digestOf is the Digest of docs, made with Add.
func digestOf(docs []Document) Digest {
	var d Digest
	for _, doc := range docs {
		d.Add(doc.ID, doc.Hash())
	}
	return d
}

// mustApply applies changes at pos and returns the counts.
func mustApply(t *testing.T, ix *Index, changes []Change, pos Position) Applied {
	t.Helper()
	a, err := ix.Apply(t.Context(), changes, pos)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return a
}

// checkState checks ix's position, digest and length.
func checkState(t *testing.T, what string, ix *Index, pos Position, docs []Document) {
	t.Helper()
	if got := ix.Position(); !got.equal(pos) {
		t.Errorf("%s: Position() = %+v, want %+v", what, got, pos)
	}
	if got, want := ix.Digest(), digestOf(docs); got != want {
		t.Errorf("%s: Digest() = %v, want %v", what, got, want)
	}
	if ix.Len() != len(docs) {
		t.Errorf("%s: Len() = %d, want %d", what, ix.Len(), len(docs))
	}
}

func TestPositionAndDigestRoundTrip(t *testing.T) {
	docs := smallDocs(t)
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Create(dir, "live")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	checkState(t, "created", ix, Position{}, nil)
	// Newest in a zone other than UTC, with nanoseconds: kept to the
	// nanosecond through the index's storage.
	newest := time.Date(2026, 11, 28, 6, 30, 0, 123456789, time.FixedZone("CET", 3600))
	pos1 := Position{Topic: "retrieval.documents", Offsets: map[int32]int64{0: 12, 3: 7}, Newest: newest}
	mustApply(t, ix, upserts(docs), pos1)
	checkState(t, "applied", ix, pos1, docs)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	w, err := OpenWritable(dir)
	if err != nil {
		t.Fatalf("OpenWritable: %v", err)
	}
	checkState(t, "reopened writable", w, pos1, docs)
	pos2 := Position{Topic: "retrieval.documents", Offsets: map[int32]int64{0: 13, 3: 7}, Newest: newest.Add(time.Millisecond)}
	mustApply(t, w, []Change{{ID: docs[0].ID}}, pos2)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	ro := mustOpen(t, dir)
	checkState(t, "reopened read-only", ro, pos2, docs[1:])
	if ro.Name() != "live" {
		t.Errorf("Name() = %q", ro.Name())
	}
	if _, err := ro.Apply(t.Context(), upserts(docs[:1]), pos2); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Apply on a read-only index: %v", err)
	}
}

func TestWithPosition(t *testing.T) {
	docs := smallDocs(t)
	pos := Position{Topic: "retrieval.documents", Offsets: map[int32]int64{0: 30, 1: 2}}
	dir := filepath.Join(t.TempDir(), "index")
	if err := Build(t.Context(), dir, "small", docs, WithPosition(pos)); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkState(t, "Build", ro, pos, docs)
	if err := ro.Close(); err != nil { // OpenWritable below needs the lock
		t.Fatal(err)
	}
	mem, err := NewMemory(t.Context(), "small", docs, WithPosition(pos))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	checkState(t, "NewMemory", mem, pos, docs)
	// Position returns a copy.
	mem.Position().Offsets[0] = 99
	checkState(t, "after changing a copy", mem, pos, docs)
	// A built index is writable and continues from its position.
	w, err := OpenWritable(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	next := Position{Topic: pos.Topic, Offsets: map[int32]int64{0: 31, 1: 2}}
	mustApply(t, w, []Change{{ID: docs[1].ID}}, next)
	checkState(t, "built, then applied", w, next, append(docs[:1:1], docs[2:]...))
	bad := Position{Topic: "t", Offsets: map[int32]int64{0: -1}}
	if err := Build(t.Context(), filepath.Join(t.TempDir(), "x"), "x", docs, WithPosition(bad)); err == nil {
		t.Error("Build accepted a negative offset")
	}
}

func TestApplyCountsAndDeletes(t *testing.T) {
	docs := smallDocs(t)
	ix := mustMemory(t, "small", docs)
	gz, _ := ix.Document("compress/gzip")
	changed := gz
	changed.Body = "Package gzip reads and writes gzip files. Now with zebras."
	fresh := Document{ID: "new/doc", Title: "new", Body: "quokkas everywhere"}
	pos := Position{Topic: "docs", Offsets: map[int32]int64{0: 1}}
	got := mustApply(t, ix, []Change{
		{ID: gz.ID, Doc: &gz},           // same version: unchanged
		{ID: "absent"},                  // absent: unchanged
		{ID: "archive/tar"},             // deleted
		{ID: "archive/tar"},             // already deleted: unchanged
		{ID: fresh.ID, Doc: &fresh},     // new: upserted
		{ID: fresh.ID},                  // then deleted
		{ID: changed.ID, Doc: &changed}, // new version: upserted
		{ID: "net/url.URL", Doc: nil},   // deleted
		{ID: changed.ID, Doc: &changed}, // same again: unchanged
	}, pos)
	want := Applied{Upserted: 2, Deleted: 3, Unchanged: 4}
	if got != want {
		t.Errorf("Applied = %+v, want %+v", got, want)
	}
	var final []Document
	for _, d := range docs {
		switch d.ID {
		case "archive/tar", "net/url.URL":
		case gz.ID:
			final = append(final, changed)
		default:
			final = append(final, d)
		}
	}
	checkState(t, "applied", ix, pos, final)
	for _, id := range []string{"archive/tar", "net/url.URL", fresh.ID} {
		if d, ok := ix.Document(id); ok {
			t.Errorf("deleted %q: Document = %+v", id, d)
		}
		if v, ok := ix.Version(id); ok {
			t.Errorf("deleted %q: Version = %q", id, v)
		}
	}
	for q, id := range map[string]string{"tar archives": "archive/tar", "URL represents a parsed URL": "net/url.URL", "quokkas": fresh.ID} {
		hits, err := ix.Search(t.Context(), q, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		if slicesContain(ids(hits), id) {
			t.Errorf("%q still finds deleted %q", q, id)
		}
	}
	if d, _ := ix.Document(gz.ID); !reflect.DeepEqual(d, changed) {
		t.Errorf("Document(%q) = %+v, want %+v (no version in it)", gz.ID, d, changed)
	}
	if v, ok := ix.Version(gz.ID); !ok || v != changed.Hash() {
		t.Errorf("Version(%q) = %q, %v; want %q", gz.ID, v, ok, changed.Hash())
	}
	if hits, _ := ix.Search(t.Context(), "zebras", 1); len(hits) != 1 || hits[0].ID != gz.ID {
		t.Errorf("zebras: %v", hits)
	}
}

// slicesContain reports whether s holds v.
func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestApplyRefusesBadChanges(t *testing.T) {
	docs := smallDocs(t)
	ix := mustMemory(t, "small", docs)
	pos := Position{Topic: "docs", Offsets: map[int32]int64{0: 5}}
	mustApply(t, ix, nil, pos)
	good := Document{ID: "good", Body: "marmosets"}
	other := Document{ID: "other", Body: "marmosets"}
	tests := []struct {
		name    string
		changes []Change
		pos     Position
	}{
		{"empty id", []Change{{ID: good.ID, Doc: &good}, {ID: ""}}, pos},
		{"id differs from the document's", []Change{{ID: good.ID, Doc: &good}, {ID: "x", Doc: &other}}, pos},
		{"negative offset", []Change{{ID: good.ID, Doc: &good}}, Position{Topic: "docs", Offsets: map[int32]int64{0: -2}}},
		{"negative partition", []Change{{ID: good.ID, Doc: &good}}, Position{Topic: "docs", Offsets: map[int32]int64{-1: 2}}},
		{"offsets without a topic", []Change{{ID: good.ID, Doc: &good}}, Position{Offsets: map[int32]int64{0: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ix.Apply(t.Context(), tt.changes, tt.pos)
			if err == nil {
				t.Fatalf("Apply accepted it: %+v", a)
			}
			if _, ok := ix.Document(good.ID); ok {
				t.Error("the good change was applied")
			}
			checkState(t, "refused", ix, pos, docs)
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ix.Apply(ctx, upserts([]Document{good}), pos); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Apply: %v", err)
	}
	checkState(t, "cancelled", ix, pos, docs)
}

func TestApplyPackageContext(t *testing.T) {
	pkg := Document{ID: "zoo/okapi", Kind: "package", ImportPath: "zoo/okapi", Body: "Package okapi feeds giraffes. More text."}
	member := Document{ID: "zoo/okapi.Feed", Kind: "func", ImportPath: "zoo/okapi", Body: "Feed runs."}
	ix := mustMemory(t, "zoo", nil)
	finds := func(query string) []string {
		t.Helper()
		hits, err := ix.Search(t.Context(), query, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		return ids(hits)
	}
	check := func(step, query string, want ...string) {
		t.Helper()
		if got := finds(query); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: %q finds %v, want %v", step, query, got, want)
		}
	}
	mustApply(t, ix, upserts([]Document{member}), Position{})
	check("member alone", "giraffes")
	mustApply(t, ix, upserts([]Document{pkg}), Position{})
	check("package after its member", "giraffes", "zoo/okapi", "zoo/okapi.Feed")
	pkg.Body = "Package okapi grooms zebras. More text about giraffes."
	mustApply(t, ix, upserts([]Document{pkg}), Position{})
	check("package changed", "zebras", "zoo/okapi", "zoo/okapi.Feed")
	check("package changed", "giraffes", "zoo/okapi")
	// Changed after the first sentence only: no re-index needed, and none
	// is visible.
	pkg.Body = "Package okapi grooms zebras. Nothing about giraffes."
	mustApply(t, ix, upserts([]Document{pkg}), Position{})
	check("package's tail changed", "zebras", "zoo/okapi", "zoo/okapi.Feed")
	mustApply(t, ix, []Change{{ID: pkg.ID}}, Position{})
	check("package deleted", "zebras")
	// Package and member in one call, the member first.
	member.Body = "Feed runs again."
	pkg.Body = "Package okapi counts stripes."
	mustApply(t, ix, upserts([]Document{member, pkg}), Position{})
	check("both in one call", "stripes", "zoo/okapi", "zoo/okapi.Feed")
	// A package document turned into another kind gives no context.
	notPkg := pkg
	notPkg.Kind = "note"
	mustApply(t, ix, upserts([]Document{notPkg}), Position{})
	check("no longer a package", "stripes", "zoo/okapi")
}

func TestOpenRefusesFormatOne(t *testing.T) {
	dir := buildSmall(t)
	idx, err := bleve.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.SetInternal(internalFormat, []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(string) (*Index, error){"Open": Open, "OpenWritable": OpenWritable} {
		ix, err := open(dir)
		if err == nil {
			ix.Close()
			t.Fatalf("%s opened a format 1 index", name)
		}
		if !strings.Contains(err.Error(), "older kretrieve") || !strings.Contains(err.Error(), "rebuild") {
			t.Errorf("%s: unclear error %v", name, err)
		}
	}
}

func TestCreateDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "index")
	ix, err := Create(dir, "live")
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, parent); !reflect.DeepEqual(got, []string{"index"}) {
		t.Errorf("%s holds %v", parent, got)
	}
	if ix, err := Create(dir, "again"); err == nil {
		ix.Close()
		t.Error("Create over an index succeeded")
	}
	if ix := mustOpen(t, dir); ix.Name() != "live" || ix.Len() != 0 {
		t.Errorf("Name %q, Len %d", ix.Name(), ix.Len())
	}
}

// TestSearchDuringApply runs searches and highlights while Apply changes
// documents (run with -race): every search succeeds and finds the document
// that never changes, and each highlighted snippet comes from the body of
// the document returned with it.
func TestSearchDuringApply(t *testing.T) {
	docs := smallDocs(t)
	ix, err := Create(filepath.Join(t.TempDir(), "index"), "live")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	mustApply(t, ix, upserts(docs), Position{})
	var (
		stop     atomic.Bool
		searches atomic.Int64
		wg       sync.WaitGroup
	)
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				hits, err := ix.Search(t.Context(), "gzip tar archives", 5)
				if err != nil || !slicesContain(ids(hits), "archive/tar") {
					t.Errorf("hits %v, err %v", hits, err)
					return
				}
				h, err := ix.Highlight(t.Context(), "gzip format", []string{"compress/gzip"}, 80)
				if err != nil {
					t.Errorf("Highlight: %v", err)
					return
				}
				if got, ok := h["compress/gzip"]; ok && !snippetOf(got) {
					t.Errorf("snippet %q not from body %q", got.Snippet, got.Document.Body)
					return
				}
				searches.Add(1)
			}
		})
	}
	gz, _ := ix.Document("compress/gzip")
	for i := 0; i < 40 || searches.Load() < 20; i++ {
		d := gz
		d.Body = strings.Repeat("padding words ", i%7) + gz.Body + strings.Repeat(" gzip", i%3)
		changes := []Change{{ID: d.ID, Doc: &d}, {ID: "net/url.URL"}}
		if i%2 == 1 {
			changes[1] = Change{ID: "net/url.URL", Doc: &docs[3]}
		}
		if _, err := ix.Apply(t.Context(), changes, Position{Topic: "docs", Offsets: map[int32]int64{0: int64(i)}}); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
}

// snippetOf reports whether h's snippet, without marks, escapes and
// ellipses, is text of h's document's body.
func snippetOf(h Highlighted) bool {
	s := strings.NewReplacer(MarkStart, "", MarkEnd, "").Replace(h.Snippet)
	for _, part := range strings.Split(html.UnescapeString(s), "…") {
		if !strings.Contains(h.Document.Body, strings.TrimSpace(part)) {
			return false
		}
	}
	return true
}

// TestPositionNeverBehindSearch: a Position read after a search is at
// least as far as the documents that search found. bleve makes a batch
// searchable before Batch returns (it then waits to persist it), so a
// position kept only once Batch returned lagged behind what searches saw,
// and a worker stamped results that held a new document with the
// freshness of the index before it.
func TestPositionNeverBehindSearch(t *testing.T) {
	ix, err := Create(filepath.Join(t.TempDir(), "index"), "live")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	const n = 60
	var (
		stop   atomic.Bool
		checks atomic.Int64
		wg     sync.WaitGroup
	)
	wg.Go(func() {
		for !stop.Load() {
			hits, err := ix.Search(t.Context(), "zebrafish", n)
			if err != nil {
				t.Errorf("Search: %v", err)
				return
			}
			pos := ix.Position()
			if got := pos.Offsets[0]; got < int64(len(hits)) {
				t.Errorf("a search found %d documents, then Position() = %d: behind them", len(hits), got)
				return
			}
			if len(hits) > 0 && pos.Newest.IsZero() {
				t.Errorf("a search found %d documents, then Position() has no newest record", len(hits))
				return
			}
			checks.Add(1)
		}
	})
	start := time.Now()
	for i := range n {
		d := Document{ID: fmt.Sprintf("fish-%02d", i), Title: "zebrafish", Body: "zebrafish number " + strconv.Itoa(i)}
		pos := Position{Topic: "docs", Offsets: map[int32]int64{0: int64(i + 1)}, Newest: start.Add(time.Duration(i) * time.Millisecond)}
		if _, err := ix.Apply(t.Context(), []Change{{ID: d.ID, Doc: &d}}, pos); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if checks.Load() == 0 {
		t.Fatal("no search ran during the applies")
	}
}
