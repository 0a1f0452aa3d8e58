package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSearchRanksByBM25(t *testing.T) {
	ix, err := NewIndex("t", []Document{
		{ID: "a", Title: "gzip", Body: "gzip compression reader and writer"},
		{ID: "b", Title: "zip", Body: "zip archives; compression methods include deflate"},
		{ID: "c", Title: "url", Body: "parse urls and query strings"},
	})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(t.Context(), "GZIP compression", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != "a" || hits[1].ID != "b" || hits[0].Score <= hits[1].Score {
		t.Fatalf("hits %+v", hits)
	}
	if hits, _ := ix.Search(t.Context(), "nothing matches", 10); len(hits) != 0 {
		t.Fatalf("hits %+v", hits)
	}
	if hits, _ := ix.Search(t.Context(), "compression", 1); len(hits) != 1 {
		t.Fatalf("k not honoured: %+v", hits)
	}
	if _, err := ix.Search(t.Context(), "x", 0); err == nil {
		t.Fatal("k=0 accepted")
	}
	if d, ok := ix.Document("c"); !ok || d.Title != "url" {
		t.Fatalf("Document(c) = %+v %v", d, ok)
	}
}

func TestNewIndexRejectsBadIDs(t *testing.T) {
	if _, err := NewIndex("t", []Document{{ID: ""}}); err == nil {
		t.Fatal("empty id accepted")
	}
	if _, err := NewIndex("t", []Document{{ID: "a"}, {ID: "a"}}); err == nil {
		t.Fatal("duplicate id accepted")
	}
}

func TestDemoIndex(t *testing.T) {
	ix, err := DemoIndex()
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() < 150 {
		t.Fatalf("demo corpus has %d documents", ix.Len())
	}
	for q, want := range map[string]string{
		"parse a URL query string": "net/url",
		"gzip":                     "compress/gzip",
		"read tar archives":        "archive/tar",
	} {
		hits, err := ix.Search(t.Context(), q, 3)
		if err != nil || len(hits) == 0 || hits[0].ID != want {
			t.Errorf("%q: top hits %+v, want %s", q, hits, want)
		}
	}
}

func TestSnippet(t *testing.T) {
	body := strings.Repeat("lorem ipsum ", 40) + "the gzip format is described here " + strings.Repeat("dolor sit ", 40)
	s := Snippet(body, "GZIP", 60)
	if !strings.Contains(s, "gzip") || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Fatalf("snippet %q", s)
	}
	if n := utf8.RuneCountInString(s); n > 62 {
		t.Fatalf("snippet has %d runes", n)
	}
	if got := Snippet("short body", "x", 60); got != "short body" {
		t.Fatalf("short body changed: %q", got)
	}
	multi := strings.Repeat("ü", 100) + " İstanbul gzip " + strings.Repeat("ß", 100)
	if s := Snippet(multi, "gzip", 30); !utf8.ValidString(s) || !strings.Contains(s, "gzip") {
		t.Fatalf("multi-byte snippet %q", s)
	}
}
