// SPDX-License-Identifier: Apache-2.0

package search

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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

// hostileQueries are valid queries, each within MaxQueryBytes, built to cost
// as much search as possible (security finding 6 of issue 16): one term
// repeated to the limit, and as many distinct indexed words as fit.
func hostileQueries(b *testing.B, docs []Document) map[string]string {
	b.Helper()
	seen := make(map[string]bool)
	var distinct strings.Builder
	for _, d := range docs {
		for _, w := range strings.Fields(strings.ToLower(d.Title + " " + d.Body)) {
			w = strings.Trim(w, ".,;:()[]{}\"'`*")
			if w == "" || seen[w] || distinct.Len()+len(w)+1 > MaxQueryBytes {
				continue
			}
			seen[w] = true
			distinct.WriteString(w + " ")
		}
	}
	return map[string]string{
		"repeated": strings.Repeat("go ", 1365),
		// "string" is in about a third of the documents.
		"repeated-common": strings.Repeat("string ", MaxQueryBytes/len("string ")),
		"distinct":        distinct.String(),
	}
}

// BenchmarkSearchCost compares the cost of a normal query with hostile ones
// at top_k MaxK: after term de-duplication and MaxQueryTerms, "repeated"
// (the query of security finding 6, issue 16) and "repeated-common" cost
// about what "normal" does, and "distinct" stays within a small multiple of
// it.
func BenchmarkSearchCost(b *testing.B) {
	docs := benchDocs(b)
	ix := mustMemory(b, "bench", docs)
	queries := hostileQueries(b, docs)
	queries["normal"] = "parse a URL query string"
	for _, name := range []string{"normal", "repeated", "repeated-common", "distinct"} {
		q := queries[name]
		if len(q) > MaxQueryBytes {
			b.Fatalf("%s query of %d bytes", name, len(q))
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ix.Search(b.Context(), q, MaxK); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// applyBatchSize is the batch size BenchmarkApplyVsBuild applies in.
const applyBatchSize = 500

// BenchmarkApplyVsBuild measures documents per second into an on-disk
// index: Build of the whole corpus against Create then Apply in batches of
// applyBatchSize, in corpus order (each package before its members) and
// shuffled (members often before their package, which re-indexes them).
// Issue 24's target: Apply at least 0.8× Build.
func BenchmarkApplyVsBuild(b *testing.B) {
	docs := benchDocs(b)
	shuffled := slices.Clone(docs)
	rand.New(rand.NewPCG(24, 24)).Shuffle(len(shuffled), func(i, j int) {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	})
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if err := Build(b.Context(), filepath.Join(b.TempDir(), "index"), "bench", docs); err != nil {
				b.Fatal(err)
			}
		}
		reportDocsPerSecond(b, len(docs))
	})
	for _, run := range []struct {
		name string
		docs []Document
	}{{"apply", docs}, {"apply-shuffled", shuffled}} {
		b.Run(run.name, func(b *testing.B) {
			for b.Loop() {
				applyAll(b, filepath.Join(b.TempDir(), "index"), run.docs)
			}
			reportDocsPerSecond(b, len(docs))
		})
	}
}

// applyAll creates an index at dir and applies docs to it in batches of
// applyBatchSize.
func applyAll(b *testing.B, dir string, docs []Document) {
	ix, err := Create(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	changes := make([]Change, len(docs))
	for i := range docs {
		changes[i] = Change{ID: docs[i].ID, Doc: &docs[i]}
	}
	for start := 0; start < len(changes); start += applyBatchSize {
		end := min(len(changes), start+applyBatchSize)
		pos := Position{Topic: "bench", Offsets: map[int32]int64{0: int64(end)}}
		if _, err := ix.Apply(b.Context(), changes[start:end], pos); err != nil {
			b.Fatal(err)
		}
	}
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
}

// reportDocsPerSecond reports the documents indexed per second, n per
// iteration.
func reportDocsPerSecond(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkPosition measures Position on a live on-disk index, which every
// request reads once per stage (its index_freshness stamp): it reads the
// stored position from the index's current snapshot and decodes it only
// when it changed.
func BenchmarkPosition(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "index")
	ix, err := Create(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	d := Document{ID: "a", Title: "a", Body: "a document"}
	pos := Position{Topic: "bench", Offsets: map[int32]int64{0: 1, 1: 7, 2: 9, 3: 4, 4: 2, 5: 8}, Newest: time.Now()}
	if _, err := ix.Apply(b.Context(), []Change{{ID: d.ID, Doc: &d}}, pos); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if p := ix.Position(); len(p.Offsets) != 6 {
			b.Fatal(p)
		}
	}
}
