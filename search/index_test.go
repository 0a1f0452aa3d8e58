// SPDX-License-Identifier: Apache-2.0

package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

func TestBuildOpenKeepsNameLenAndDocuments(t *testing.T) {
	docs := smallDocs(t)
	ix := openSmall(t)
	if got := ix.Name(); got != "small" {
		t.Errorf("Name() = %q, want small", got)
	}
	if got := ix.Len(); got != len(docs) {
		t.Errorf("Len() = %d, want %d", got, len(docs))
	}
	for _, want := range docs {
		got, ok := ix.Document(want.ID)
		if !ok {
			t.Errorf("Document(%q) not found", want.ID)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Document(%q)\n got %#v\nwant %#v", want.ID, got, want)
		}
	}
}

func TestDocumentMetadata(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	d, ok := ix.Document("notes/tracing-sampling")
	if !ok {
		t.Fatal("document not found")
	}
	// Dotted keys, empty values and date-like values come back as written.
	want := map[string]string{"author": "observability", "a.b": "dotted key", "empty": ""}
	if !reflect.DeepEqual(d.Metadata, want) {
		t.Errorf("Metadata = %#v, want %#v", d.Metadata, want)
	}
	d, _ = ix.Document("notes/kafka-consumer-groups")
	if got := d.Metadata["updated"]; got != "2024-05-01" {
		t.Errorf("date-like metadata = %q, want 2024-05-01", got)
	}
	if d, _ := ix.Document("recipes/pancakes"); d.Metadata != nil {
		t.Errorf("document without metadata has %#v", d.Metadata)
	}
}

func TestDocumentMissing(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	for _, id := range []string{"", "nope", "net/url.Nope", "NET/URL"} {
		if d, ok := ix.Document(id); ok {
			t.Errorf("Document(%q) = %+v, true", id, d)
		}
	}
}

func TestBuildDirectory(t *testing.T) {
	docs := smallDocs(t)
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		suffix  string // appended to the directory name passed to Build
		wantErr bool
	}{
		{name: "absent", prepare: func(*testing.T, string) {}},
		{name: "absent, trailing slash", suffix: "/", prepare: func(*testing.T, string) {}},
		{name: "empty directory", prepare: func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "non-empty directory", wantErr: true, prepare: func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file", wantErr: true, prepare: func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "index")
			tt.prepare(t, dir)
			before := listDir(t, parent)
			err := Build(t.Context(), dir+tt.suffix, "small", docs)
			if tt.wantErr {
				if err == nil {
					t.Fatal("Build succeeded")
				}
				if after := listDir(t, parent); !reflect.DeepEqual(after, before) {
					t.Errorf("failed Build changed %s: %v, was %v", parent, after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got := listDir(t, parent); !reflect.DeepEqual(got, []string{"index"}) {
				t.Errorf("%s holds %v, want only the index", parent, got)
			}
			if ix := mustOpen(t, dir); ix.Len() != len(docs) {
				t.Errorf("Len() = %d, want %d", ix.Len(), len(docs))
			}
		})
	}
}

func TestBuildRejectsBadIDs(t *testing.T) {
	tests := []struct {
		name string
		docs []Document
	}{
		{"empty id", []Document{{ID: "a"}, {ID: ""}}},
		{"duplicate id", []Document{{ID: "a"}, {ID: "b"}, {ID: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			if err := Build(t.Context(), dir, "x", tt.docs); err == nil {
				t.Error("Build accepted the documents")
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Build left %s: %v", dir, err)
			}
			if ix, err := NewMemory(t.Context(), "x", tt.docs); err == nil {
				ix.Close()
				t.Error("NewMemory accepted the documents")
			}
		})
	}
}

// cancelAfter is a context whose Err reports context.Canceled from its
// n-th call on, to cancel a Build between two batches.
type cancelAfter struct {
	context.Context
	mu    sync.Mutex
	calls int
	n     int
}

func (c *cancelAfter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

func TestBuildCancelled(t *testing.T) {
	// Batches of 8 documents: four batches, then the name, so five checks
	// of ctx.
	docs := smallDocs(t)
	if len(docs) <= 24 || len(docs) > 32 {
		t.Fatalf("want 25 to 32 documents, have %d", len(docs))
	}
	opt := WithBatchSize(8)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
	}{
		{"before the first batch", cancelled},
		{"after the first batch", &cancelAfter{Context: t.Context(), n: 2}},
		{"before the name is written", &cancelAfter{Context: t.Context(), n: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "index")
			err := Build(tt.ctx, dir, "many", docs, opt)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Build error = %v, want context.Canceled", err)
			}
			if got := listDir(t, parent); len(got) != 0 {
				t.Errorf("cancelled Build left %v", got)
			}
			if ix, err := NewMemory(tt.ctx, "many", docs, opt); !errors.Is(err, context.Canceled) {
				if err == nil {
					ix.Close()
				}
				t.Errorf("NewMemory error = %v, want context.Canceled", err)
			}
		})
	}
}

func TestOpenTwiceReadOnly(t *testing.T) {
	dir := buildSmall(t)
	a := mustOpen(t, dir)
	b := mustOpen(t, dir)
	var wg sync.WaitGroup
	for _, ix := range []*Index{a, b, a, b} {
		wg.Go(func() {
			hits, err := ix.Search(t.Context(), "gzip", 3)
			if err != nil {
				t.Errorf("Search: %v", err)
				return
			}
			if len(hits) == 0 || hits[0].ID != "compress/gzip" {
				t.Errorf("hits %v, want compress/gzip first", ids(hits))
			}
		})
	}
	wg.Wait()
	// Closing one leaves the other usable.
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if hits, err := b.Search(t.Context(), "tar archives", 1); err != nil || len(hits) != 1 || hits[0].ID != "archive/tar" {
		t.Errorf("after closing the other: hits %v, err %v", hits, err)
	}
	if _, err := a.Search(t.Context(), "gzip", 1); err == nil {
		t.Error("Search on a closed index succeeded")
	}
}

func TestOpenErrors(t *testing.T) {
	foreign := filepath.Join(t.TempDir(), "foreign")
	idx, err := bleve.New(foreign, bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
	}{
		{"absent", filepath.Join(t.TempDir(), "absent")},
		{"empty directory", t.TempDir()},
		{"not a kretrieve index", foreign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ix, err := Open(tt.dir); err == nil {
				ix.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

func TestNewMemoryEmpty(t *testing.T) {
	ix := mustMemory(t, "empty", nil)
	if ix.Len() != 0 || ix.Name() != "empty" {
		t.Errorf("Len() = %d, Name() = %q", ix.Len(), ix.Name())
	}
	if hits, err := ix.Search(t.Context(), "anything", 10); err != nil || len(hits) != 0 {
		t.Errorf("hits %v, err %v", hits, err)
	}
}

// listDir returns the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestBatchSizes(t *testing.T) {
	docs := smallDocs(t)
	for _, size := range []int{-1, 1, 7, len(docs), 1000} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			if err := Build(t.Context(), dir, "small", docs, WithBatchSize(size)); err != nil {
				t.Fatal(err)
			}
			for _, ix := range []*Index{mustOpen(t, dir), mustMemory(t, "small", docs)} {
				if ix.Len() != len(docs) {
					t.Errorf("Len() = %d, want %d", ix.Len(), len(docs))
				}
				hits, err := ix.Search(t.Context(), "ParseQuery", 1)
				if err != nil || len(hits) != 1 || hits[0].ID != "net/url.ParseQuery" {
					t.Errorf("hits %v, err %v", hits, err)
				}
			}
		})
	}
}
