// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kretrieve/kretrieve/search"
)

// stdlib caches one extraction of the real GOROOT per test binary.
var stdlib struct {
	once    sync.Once
	docs    []search.Document
	err     error
	elapsed time.Duration
}

// stdlibDocs returns GoStdlib's output for the GOROOT of the go command
// running the tests, extracting it on first use.
func stdlibDocs(t *testing.T) []search.Document {
	t.Helper()
	stdlib.once.Do(func() {
		start := time.Now()
		stdlib.docs, stdlib.err = GoStdlib(context.Background(), "")
		stdlib.elapsed = time.Since(start)
	})
	if stdlib.err != nil {
		t.Fatalf("GoStdlib: %v", stdlib.err)
	}
	return stdlib.docs
}

// stdlibByID indexes the real corpus by ID.
func stdlibByID(t *testing.T) map[string]search.Document {
	t.Helper()
	docs := stdlibDocs(t)
	byID := make(map[string]search.Document, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	return byID
}

func TestGoStdlibCorpus(t *testing.T) {
	docs := stdlibDocs(t)
	t.Logf("%d documents in %v", len(docs), stdlib.elapsed)

	if len(docs) < 5000 {
		t.Errorf("got %d documents, want at least 5000", len(docs))
	}
	if !slices.IsSortedFunc(docs, func(a, b search.Document) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("documents are not sorted by ID")
	}
	seen := make(map[string]bool, len(docs))
	kinds := make(map[string]int)
	for _, d := range docs {
		if seen[d.ID] {
			t.Errorf("duplicate ID %q", d.ID)
		}
		seen[d.ID] = true
		kinds[d.Kind]++
		if d.Title != d.ID {
			t.Errorf("%s: title %q, want the ID", d.ID, d.Title)
		}
		if strings.TrimSpace(d.Body) == "" || !utf8.ValidString(d.Body) {
			t.Errorf("%s: body %q is empty or not valid UTF-8", d.ID, d.Body)
		}
		if d.Source != GoStdlibSource {
			t.Errorf("%s: source %q, want %q", d.ID, d.Source, GoStdlibSource)
		}
		if !strings.HasPrefix(d.ID, d.ImportPath) || !strings.HasPrefix(d.URL, "https://pkg.go.dev/"+d.ImportPath) {
			t.Errorf("%s: import path %q, URL %q", d.ID, d.ImportPath, d.URL)
		}
		for _, seg := range strings.Split(d.ImportPath, "/") {
			switch seg {
			case "internal", "vendor", "cmd", "testdata":
				t.Errorf("%s: from a skipped directory", d.ID)
			}
		}
	}
	for _, k := range []string{KindPackage, KindFunc, KindType, KindMethod, KindConst, KindVar} {
		if kinds[k] == 0 {
			t.Errorf("no documents of kind %q", k)
		}
	}
	if len(kinds) != 6 {
		t.Errorf("kinds %v, want only the six Go kinds", kinds)
	}
}

func TestGoStdlibDocuments(t *testing.T) {
	byID := stdlibByID(t)
	tests := []struct {
		id       string
		kind     string
		url      string
		contains []string
	}{
		{"net/url.ParseQuery", KindFunc, "https://pkg.go.dev/net/url#ParseQuery", []string{"func ParseQuery(query string) (Values, error)", "query"}},
		{"bufio.Scanner", KindType, "https://pkg.go.dev/bufio#Scanner", []string{"type Scanner struct", "Scanner provides"}},
		{"bufio.NewScanner", KindFunc, "https://pkg.go.dev/bufio#NewScanner", []string{"func NewScanner(r io.Reader) *Scanner"}},
		{"bufio.Scanner.Scan", KindMethod, "https://pkg.go.dev/bufio#Scanner.Scan", []string{"func (s *Scanner) Scan() bool", "next token"}},
		{"net/http", KindPackage, "https://pkg.go.dev/net/http", []string{"HTTP client and server"}},
		{"io.EOF", KindVar, "https://pkg.go.dev/io#EOF", []string{"var EOF", "no more input"}},
		{"os.O_RDONLY", KindConst, "https://pkg.go.dev/os#O_RDONLY", []string{"const O_RDONLY int", "read-only", "Flags to OpenFile"}},
		{"time.Duration", KindType, "https://pkg.go.dev/time#Duration", []string{"type Duration int64"}},
		{"slices.SortFunc", KindFunc, "https://pkg.go.dev/slices#SortFunc", []string{"func SortFunc[S ~[]E, E any](x S, cmp func(a, b E) int)"}},
		{"testing.T.TempDir", KindMethod, "https://pkg.go.dev/testing#T.TempDir", []string{"func (c *T) TempDir() string", "temporary directory"}},
		{"builtin.append", KindFunc, "https://pkg.go.dev/builtin#append", []string{"func append(slice []Type, elems ...Type) []Type"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			d, ok := byID[tt.id]
			if !ok {
				t.Fatalf("no document %q", tt.id)
			}
			if d.Kind != tt.kind || d.URL != tt.url {
				t.Errorf("kind %q, URL %q; want %q, %q", d.Kind, d.URL, tt.kind, tt.url)
			}
			for _, s := range tt.contains {
				if !strings.Contains(d.Body, s) {
					t.Errorf("body does not contain %q:\n%s", s, d.Body)
				}
			}
		})
	}
}

// writeFiles creates the files (path relative to dir: contents) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// otherGOOS is an operating system other than the one running the tests.
func otherGOOS() string {
	if runtime.GOOS == "plan9" {
		return "windows"
	}
	return "plan9"
}

func TestGoStdlibFixture(t *testing.T) {
	root := t.TempDir()
	other := otherGOOS()
	writeFiles(t, filepath.Join(root, "src"), map[string]string{
		"foo/doc.go": "// Package foo is a [fixture].\npackage foo\n",
		"foo/foo.go": `package foo

import "errors"

// Flags of the fixture.
const (
	// A is the first.
	A Mode = iota // line comment a
	B
	c
)

// Mode is a mode.
type Mode int

// String returns the name of [Mode] m.
func (m Mode) String() string { return "" }

func (m Mode) unexported() {}

// Thing is a struct.
type Thing struct {
	X int
	inner
}

type inner struct{}

// Hello is promoted.
func (in *inner) Hello() {}

// NewThing makes a Thing.
func NewThing(x int) *Thing { return &Thing{X: x} }

func (t *Thing) Undocumented(a, b int) (int, error) { return 0, nil }

// Err is an error.
var Err = errors.New("foo")

func helper() {}

func Long(
	a int,
	b string,
) error {
	return nil
}
`,
		"foo/foo_" + other + ".go":     "package foo\n\nfunc OnlyOther() {}\n",
		"foo/tagged.go":                "//go:build !" + other + "\n\npackage foo\n\nfunc Tagged() {}\n",
		"foo/ignored.go":               "//go:build ignore\n\npackage main\n\nfunc main() {}\n",
		"foo/foo_test.go":              "package foo\n\nfunc TestExported() {}\n",
		"foo/internal/bar/bar.go":      "package bar\n\nfunc Internal() {}\n",
		"foo/testdata/td.go":           "package td\n\nfunc TestData() {}\n",
		"cmd/tool/tool.go":             "package tool\n\nfunc Tool() {}\n",
		"vendor/v/v.go":                "package v\n\nfunc Vendored() {}\n",
		"_skip/s.go":                   "package s\n\nfunc Skipped() {}\n",
		".hidden/h.go":                 "package h\n\nfunc Hidden() {}\n",
		"app/main.go":                  "package main\n\nfunc main() {}\n\nfunc Exported() {}\n",
		"a/b/b.go":                     "package b\n\n// Map maps.\nfunc Map[T, U any](s []T, f func(T) U) []U { return nil }\n",
		"a/empty/README":               "not Go\n",
		"a/b/ignored_" + other + ".go": "package b\n\nfunc Other() {}\n",
	})

	docs, err := GoStdlib(t.Context(), root)
	if err != nil {
		t.Fatalf("GoStdlib: %v", err)
	}
	got := make(map[string]search.Document)
	var ids []string
	for _, d := range docs {
		got[d.ID] = d
		ids = append(ids, d.ID)
	}
	wantIDs := []string{
		"a/b", "a/b.Map",
		"foo", "foo.A", "foo.B", "foo.Err", "foo.Long", "foo.Mode", "foo.Mode.String",
		"foo.NewThing", "foo.Tagged", "foo.Thing", "foo.Thing.Hello", "foo.Thing.Undocumented",
	}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("IDs:\n got %q\nwant %q", ids, wantIDs)
	}

	tests := []struct {
		id, kind, url, body string
	}{
		{"a/b", KindPackage, "https://pkg.go.dev/a/b", "package b"},
		{"a/b.Map", KindFunc, "https://pkg.go.dev/a/b#Map", "func Map[T, U any](s []T, f func(T) U) []U\n\nMap maps."},
		{"foo", KindPackage, "https://pkg.go.dev/foo", "Package foo is a [fixture]."},
		{"foo.A", KindConst, "https://pkg.go.dev/foo#A", "const A Mode = iota\n\nA is the first.\n\nline comment a\n\nFlags of the fixture."},
		{"foo.B", KindConst, "https://pkg.go.dev/foo#B", "const B Mode\n\nFlags of the fixture."},
		{"foo.Err", KindVar, "https://pkg.go.dev/foo#Err", "var Err = errors.New(\"foo\")\n\nErr is an error."},
		{"foo.Long", KindFunc, "https://pkg.go.dev/foo#Long", "func Long(a int, b string) error"},
		{"foo.Mode", KindType, "https://pkg.go.dev/foo#Mode", "type Mode int\n\nMode is a mode."},
		{"foo.Mode.String", KindMethod, "https://pkg.go.dev/foo#Mode.String", "func (m Mode) String() string\n\nString returns the name of Mode m."},
		{"foo.NewThing", KindFunc, "https://pkg.go.dev/foo#NewThing", "func NewThing(x int) *Thing\n\nNewThing makes a Thing."},
		{"foo.Thing", KindType, "https://pkg.go.dev/foo#Thing", "type Thing struct\n\nThing is a struct."},
		{"foo.Thing.Hello", KindMethod, "https://pkg.go.dev/foo#Thing.Hello", "func (in *Thing) Hello()\n\nHello is promoted."},
		{"foo.Thing.Undocumented", KindMethod, "https://pkg.go.dev/foo#Thing.Undocumented", "func (t *Thing) Undocumented(a, b int) (int, error)"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			d := got[tt.id]
			want := search.Document{
				ID: tt.id, Title: tt.id, Body: tt.body, Kind: tt.kind,
				ImportPath: strings.Split(tt.id, ".")[0], URL: tt.url, Source: GoStdlibSource,
			}
			if d.ID != want.ID || d.Title != want.Title || d.Body != want.Body || d.Kind != want.Kind ||
				d.ImportPath != want.ImportPath || d.URL != want.URL || d.Source != want.Source || d.Metadata != nil {
				t.Errorf("got  %#v\nwant %#v", d, want)
			}
		})
	}
}

func TestGoStdlibErrors(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "root")
	writeFiles(t, notDir, map[string]string{"src": "a file\n"})
	broken := t.TempDir()
	writeFiles(t, filepath.Join(broken, "src"), map[string]string{"p/p.go": "package p\n\nfunc (\n"})
	mixed := t.TempDir()
	writeFiles(t, filepath.Join(mixed, "src"), map[string]string{
		"p/a.go": "package a\n",
		"p/b.go": "package b\n",
	})

	tests := []struct {
		name   string
		goroot string
		want   string
	}{
		{"missing", filepath.Join(t.TempDir(), "nope"), "goroot: "},
		{"src is a file", notDir, "is not a directory"},
		{"syntax error", broken, "parse p/p.go: "},
		{"two packages", mixed, "package p: files of packages a and b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := GoStdlib(t.Context(), tt.goroot)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if docs != nil {
				t.Errorf("got %d documents with an error", len(docs))
			}
		})
	}
}

func TestGoStdlibCancel(t *testing.T) {
	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		extracted := countExtractions(t)
		docs, err := GoStdlib(ctx, "")
		if !errors.Is(err, context.Canceled) || docs != nil {
			t.Fatalf("got %d docs, err %v; want context.Canceled", len(docs), err)
		}
		if n := extracted.Load(); n != 0 {
			t.Errorf("%d packages extracted after cancellation, want 0", n)
		}
	})
	t.Run("cancelled during extraction", func(t *testing.T) {
		// Cancel as the 20th package starts: at most the packages already
		// handed to the workers (one per worker) may still be extracted.
		const cancelAt = 20
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var n atomic.Int64
		extractStarted = func() {
			if n.Add(1) == cancelAt {
				cancel()
			}
		}
		t.Cleanup(func() { extractStarted = nil })
		docs, err := GoStdlib(ctx, "")
		if !errors.Is(err, context.Canceled) || docs != nil {
			t.Fatalf("got %d docs, err %v; want context.Canceled", len(docs), err)
		}
		if got, most := n.Load(), int64(cancelAt+runtime.GOMAXPROCS(0)); got > most {
			t.Errorf("%d packages extracted, want at most %d: cancellation is checked between packages", got, most)
		}
	})
}

// countExtractions counts package extractions until the test ends.
func countExtractions(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	extractStarted = func() { n.Add(1) }
	t.Cleanup(func() { extractStarted = nil })
	return &n
}

func TestResolveGOROOT(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "src"), map[string]string{"p/p.go": "package p\n"})
	got, err := resolveGOROOT(t.Context(), root)
	if err != nil || got != root {
		t.Errorf("resolveGOROOT(%q) = %q, %v", root, got, err)
	}
	got, err = resolveGOROOT(t.Context(), "")
	if err != nil || got == "" {
		t.Errorf("resolveGOROOT(\"\") = %q, %v", got, err)
	}
}

func BenchmarkGoStdlib(b *testing.B) {
	b.ReportAllocs()
	var n int
	for b.Loop() {
		docs, err := GoStdlib(b.Context(), "")
		if err != nil {
			b.Fatal(err)
		}
		n = len(docs)
	}
	b.ReportMetric(float64(n), "docs")
}
