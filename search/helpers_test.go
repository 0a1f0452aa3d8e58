// SPDX-License-Identifier: Apache-2.0

package search

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallDocs returns the documents of testdata/small.jsonl.
func smallDocs(tb testing.TB) []Document {
	tb.Helper()
	docs := jsonlDocs(tb, filepath.Join("testdata", "small.jsonl"))
	if len(docs) < 25 {
		tb.Fatalf("small corpus has %d documents", len(docs))
	}
	return docs
}

// jsonlDocs decodes the Documents of a test fixture, one JSON object per
// line, as they are (Document's own JSON form, import_path included). The
// documents users index are read by package corpus, which imports this
// package and so cannot serve its internal tests.
func jsonlDocs(tb testing.TB, path string) []Document {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var docs []Document
	for dec := json.NewDecoder(f); dec.More(); {
		var d Document
		if err := dec.Decode(&d); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
	return docs
}

// buildSmall builds the small corpus on disk and returns its directory.
func buildSmall(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "index")
	if err := Build(tb.Context(), dir, "small", smallDocs(tb)); err != nil {
		tb.Fatalf("Build: %v", err)
	}
	return dir
}

// openSmall builds the small corpus on disk and opens it read-only.
func openSmall(tb testing.TB) *Index {
	tb.Helper()
	return mustOpen(tb, buildSmall(tb))
}

// mustOpen opens dir and closes the index when the test ends.
func mustOpen(tb testing.TB, dir string) *Index {
	tb.Helper()
	ix, err := Open(dir)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := ix.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return ix
}

// mustMemory indexes docs in memory and closes the index when the test ends.
func mustMemory(tb testing.TB, name string, docs []Document) *Index {
	tb.Helper()
	ix, err := NewMemory(tb.Context(), name, docs)
	if err != nil {
		tb.Fatalf("NewMemory: %v", err)
	}
	tb.Cleanup(func() {
		if err := ix.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return ix
}

// ids returns the ids of hits.
func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// manyDocs returns n copies of docs with distinct ids ("net/url#7") and
// bodies of different lengths, so that copies score differently. Each copy
// has its own import paths ("net/url#7"), so that its package document
// (Kind "package", ID = import path) gives its members their context.
func manyDocs(docs []Document, n int) []Document {
	out := make([]Document, 0, n*len(docs))
	for i := range n {
		for _, d := range docs {
			d.ID = fmt.Sprintf("%s#%d", d.ID, i)
			if d.ImportPath != "" {
				d.ImportPath = fmt.Sprintf("%s#%d", d.ImportPath, i)
			}
			d.Body += strings.Repeat(" more", i%97)
			out = append(out, d)
		}
	}
	return out
}
