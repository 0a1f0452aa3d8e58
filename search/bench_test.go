package search

import (
	"path/filepath"
	"strconv"
	"testing"
)

// benchQueries are a mix of identifier and natural-language queries.
var benchQueries = []string{
	"ParseQuery",
	"parse a URL query string",
	"gzip",
	"bufio Scanner Scan",
	"kafka consumer rebalances",
	"json Unmarshal pointer",
}

// benchDocs is the small corpus copied to about 3,000 documents.
func benchDocs(b *testing.B) []Document {
	return manyDocs(smallDocs(b), 100)
}

func BenchmarkSearch(b *testing.B) {
	ix := mustMemory(b, "bench", benchDocs(b))
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := ix.Search(b.Context(), benchQueries[i%len(benchQueries)], 10); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkSearchOnDisk(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "index")
	if err := Build(b.Context(), dir, "bench", benchDocs(b)); err != nil {
		b.Fatal(err)
	}
	ix := mustOpen(b, dir)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := ix.Search(b.Context(), benchQueries[i%len(benchQueries)], 10); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkHighlight(b *testing.B) {
	ix := mustMemory(b, "bench", benchDocs(b))
	// Ten candidates, as the enrichment worker would get them.
	var ids []string
	for i := range 5 {
		n := strconv.Itoa(i)
		ids = append(ids, "net/url.ParseQuery#"+n, "net/url#"+n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h, err := ix.Highlight(b.Context(), "parse a URL query string", ids, 200)
		if err != nil {
			b.Fatal(err)
		}
		if len(h) != len(ids) {
			b.Fatalf("%d documents", len(h))
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	docs := benchDocs(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Build(b.Context(), filepath.Join(b.TempDir(), "index"), "bench", docs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(docs)), "docs/op")
}
