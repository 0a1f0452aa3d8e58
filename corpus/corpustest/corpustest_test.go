// SPDX-License-Identifier: Apache-2.0

package corpustest_test

import (
	"testing"

	"github.com/kretrieve/kretrieve/corpus/corpustest"
	"github.com/kretrieve/kretrieve/search"
)

// hitIDs returns the ids of hits.
func hitIDs(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestDemoIndex(t *testing.T) {
	ix, err := corpustest.DemoIndex()
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Len() < 150 || ix.Name() != corpustest.DemoName {
		t.Fatalf("demo index %q has %d documents", ix.Name(), ix.Len())
	}
	tests := []struct {
		query string
		want  string
	}{
		{"parse a URL query string", "net/url"},
		{"gzip", "compress/gzip"},
		{"read tar archives", "archive/tar"},
		{"buffered I/O", "bufio"},
		{"httptest", "net/http/httptest"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits, err := ix.Search(t.Context(), tt.query, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].ID != tt.want {
				t.Errorf("top hits %v, want %s first", hitIDs(hits), tt.want)
			}
		})
	}
	d, ok := ix.Document("net/url")
	if !ok || d.Source != "go-stdlib" || d.Kind != "package" || d.ImportPath != "net/url" || d.URL == "" {
		t.Errorf("Document(net/url) = %+v, %v", d, ok)
	}
}
