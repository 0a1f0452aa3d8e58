// SPDX-License-Identifier: Apache-2.0

package search

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSearchRanksObviousDocumentFirst(t *testing.T) {
	tests := []struct {
		query string
		want  string
	}{
		{"ParseQuery", "net/url.ParseQuery"},
		{"parse query", "net/url.ParseQuery"},
		{"url.ParseQuery", "net/url.ParseQuery"},
		{"parse a URL-encoded query string", "net/url.ParseQuery"},
		{"QueryEscape", "net/url.QueryEscape"},
		{"escape a URL query", "net/url.QueryEscape"},
		{"gzip", "compress/gzip"},
		{"read tar archives", "archive/tar"},
		{"bufio Scanner Scan", "bufio.Scanner.Scan"},
		{"scanner.Scan", "bufio.Scanner.Scan"},
		// "new recorder" ranks compress/gzip.NewReader first: it matches
		// "new" in two fields and bleve's disjunction rewards that (coord);
		// the field boosts are tuned for the Go corpus quality set instead.
		{"NewRecorder", "net/http/httptest.NewRecorder"},
		{"httptest", "net/http/httptest.NewRecorder"},
		{"listen and serve", "net/http.ListenAndServe"},
		{"json Unmarshal", "encoding/json.Unmarshal"},
		{"Atoi", "strconv.Atoi"},
		{"sha256", "crypto/sha256.Sum256"},
		{"O_RDONLY", "os.O_RDONLY"},
		{"context with timeout", "context.WithTimeout"},
		{"kafka consumer rebalances", "notes/kafka-consumer-groups"},
		{"tail sampling of traces", "notes/tracing-sampling"},
		{"TOMATOES", "garden/tomatoes"},
		{"baking bread", "recipes/sourdough"},
	}
	for name, ix := range map[string]*Index{"disk": openSmall(t), "memory": mustMemory(t, "small", smallDocs(t))} {
		t.Run(name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.query, func(t *testing.T) {
					hits, err := ix.Search(t.Context(), tt.query, 5)
					if err != nil {
						t.Fatal(err)
					}
					if len(hits) == 0 || hits[0].ID != tt.want {
						t.Fatalf("top hits %v, want %s first", ids(hits), tt.want)
					}
					if len(hits) > 1 && hits[0].Score <= hits[1].Score {
						t.Errorf("scores not decreasing: %+v", hits[:2])
					}
				})
			}
		})
	}
}

func TestSearchOrder(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	hits, err := ix.Search(t.Context(), "net url http query parse json", MaxK)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) < 10 {
		t.Fatalf("only %d hits", len(hits))
	}
	sorted := slices.IsSortedFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if !sorted {
		t.Errorf("hits not by score then id: %+v", hits)
	}
	// The top k of a search are the first k of a longer one.
	for _, k := range []int{1, 3, 7} {
		top, err := ix.Search(t.Context(), "net url http query parse json", k)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(top, hits[:k]) {
			t.Errorf("k=%d: %v, want %v", k, ids(top), ids(hits[:k]))
		}
	}
}

func TestSearchTiesByID(t *testing.T) {
	// Identical documents score the same; ids decide, whichever order they
	// were indexed in and wherever k cuts.
	var docs []Document
	for _, id := range []string{"d", "b", "e", "a", "c"} {
		docs = append(docs, Document{ID: id, Title: "same", Body: "identical text about widgets"})
	}
	docs = append(docs, Document{ID: "z", Title: "widgets", Body: "widgets widgets"})
	ix := mustMemory(t, "ties", docs)
	tests := []struct {
		k    int
		want []string
	}{
		{1, []string{"z"}},
		{2, []string{"z", "a"}},
		{3, []string{"z", "a", "b"}},
		{6, []string{"z", "a", "b", "c", "d", "e"}},
		{10, []string{"z", "a", "b", "c", "d", "e"}},
	}
	for _, tt := range tests {
		hits, err := ix.Search(t.Context(), "widgets", tt.k)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !slices.Equal(got, tt.want) {
			t.Errorf("k=%d: %v, want %v", tt.k, got, tt.want)
		}
	}
}

func TestSearchLimits(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	long := strings.Repeat("gzip ", MaxQueryBytes/5) + strings.Repeat("x", MaxQueryBytes%5)
	tests := []struct {
		name    string
		query   string
		k       int
		wantErr bool
	}{
		{"k zero", "gzip", 0, true},
		{"k negative", "gzip", -1, true},
		{"k above max", "gzip", MaxK + 1, true},
		{"k one", "gzip", 1, false},
		{"k max", "gzip", MaxK, false},
		{"query at max", long, 10, false},
		{"query above max", long + "x", 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := ix.Search(t.Context(), tt.query, tt.k)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidQuery) {
					t.Fatalf("err = %v, want ErrInvalidQuery", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || len(hits) > tt.k || hits[0].ID != "compress/gzip" {
				t.Errorf("hits %v", ids(hits))
			}
		})
	}
}

func TestSearchNoResults(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	for _, q := range []string{"", "   ", "xylophone quux", "the of an", "!!! ??? ...", `"quoted phrase nowhere"`} {
		hits, err := ix.Search(t.Context(), q, 10)
		if err != nil {
			t.Errorf("%q: %v", q, err)
		}
		if hits == nil || len(hits) != 0 {
			t.Errorf("%q: hits %#v, want empty", q, hits)
		}
	}
}

func TestSearchIsPlainText(t *testing.T) {
	// Query-string syntax has no effect: a query finds what the same words
	// without the punctuation find.
	ix := mustMemory(t, "small", smallDocs(t))
	tests := []struct{ query, plain string }{
		{"-gzip", "gzip"},
		{"kind:func", "kind func"},
		{"title:gzip +zzz", "title gzip zzz"},
		{"gzi*", "gzi"},
		{"/gz.p/", "gz p"},
		{`"tar archives"^5`, "tar archives 5"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := ix.Search(t.Context(), tt.query, 10)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ix.Search(t.Context(), tt.plain, 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("hits %v, want those of %q: %v", got, tt.plain, want)
			}
		})
	}
}

func TestSearchCancelled(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ix.Search(ctx, "gzip", 3); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestSearchConcurrent(t *testing.T) {
	queries := map[string]string{
		"ParseQuery":       "net/url.ParseQuery",
		"gzip":             "compress/gzip",
		"tar archives":     "archive/tar",
		"json Unmarshal":   "encoding/json.Unmarshal",
		"growing tomatoes": "garden/tomatoes",
	}
	for name, ix := range map[string]*Index{"disk": openSmall(t), "memory": mustMemory(t, "small", smallDocs(t))} {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 20 {
						for q, want := range queries {
							hits, err := ix.Search(t.Context(), q, 3)
							if err != nil {
								t.Error(err)
								return
							}
							if len(hits) == 0 || hits[0].ID != want {
								t.Errorf("%q: hits %v", q, ids(hits))
								return
							}
							if _, ok := ix.Document(want); !ok {
								t.Errorf("Document(%q) missing", want)
								return
							}
						}
						if _, err := ix.Highlight(t.Context(), "query", []string{"net/url", "net/url.ParseQuery"}, 50); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
