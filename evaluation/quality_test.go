// SPDX-License-Identifier: Apache-2.0

package evaluation_test

import (
	"context"
	"sync"
	"testing"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/evaluation"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
)

// Quality floors: set just under what was measured (see README, "Retrieval
// quality"), so a change that makes retrieval or re-ranking worse fails.
// Measured on Go 1.26, linux/amd64, 114 queries: retrieval recall@10 0.575,
// MRR 0.330; after enrichment recall@10 0.575, MRR 0.336.
const (
	minRecallRetrieval = 0.55
	minMRRRetrieval    = 0.31
	minRecallEnriched  = 0.55
	minMRREnriched     = 0.32
)

var (
	goIndexOnce sync.Once
	goIndex     *search.Index
	goIndexErr  error
)

// goStdlibIndex builds the Go standard library index once per test binary.
func goStdlibIndex(tb testing.TB) *search.Index {
	tb.Helper()
	goIndexOnce.Do(func() { goIndex, goIndexErr = pipeline.OpenIndex(context.Background(), "") })
	if goIndexErr != nil {
		tb.Fatal(goIndexErr)
	}
	return goIndex
}

func qualityQueries(tb testing.TB) []evaluation.Query {
	tb.Helper()
	set, err := corpus.QualitySet()
	if err != nil {
		tb.Fatal(err)
	}
	qs := make([]evaluation.Query, len(set))
	for i, q := range set {
		qs[i] = evaluation.Query{Query: q.Query, Relevant: q.Relevant}
	}
	return qs
}

func TestGoStdlibRetrievalQuality(t *testing.T) {
	ix := goStdlibIndex(t)
	if ix.Len() < 5000 {
		t.Fatalf("index has %d documents, want at least 5000", ix.Len())
	}
	qs := qualityQueries(t)
	if len(qs) < 50 {
		t.Fatalf("%d quality queries, want at least 50", len(qs))
	}
	before, err := evaluation.Retrieval(t.Context(), ix, qs, 10)
	if err != nil {
		t.Fatal(err)
	}
	after, err := evaluation.Enriched(t.Context(), ix, qs, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("retrieval:  recall@10 %.3f  MRR %.3f  (%d queries, %d misses)", before.Recall, before.MRR, before.Queries, len(before.Misses))
	t.Logf("enrichment: recall@10 %.3f  MRR %.3f  (%d misses)", after.Recall, after.MRR, len(after.Misses))
	if testing.Verbose() {
		for _, m := range after.Misses {
			t.Logf("miss: %q", m)
		}
	}
	if before.Recall < minRecallRetrieval || before.MRR < minMRRRetrieval {
		t.Errorf("retrieval quality fell: recall@10 %.3f (floor %.2f), MRR %.3f (floor %.2f)", before.Recall, minRecallRetrieval, before.MRR, minMRRRetrieval)
	}
	if after.Recall < minRecallEnriched || after.MRR < minMRREnriched {
		t.Errorf("enriched quality fell: recall@10 %.3f (floor %.2f), MRR %.3f (floor %.2f)", after.Recall, minRecallEnriched, after.MRR, minMRREnriched)
	}
	if after.Recall < before.Recall || after.MRR < before.MRR {
		t.Errorf("re-ranking hurts: recall@10 %.3f → %.3f, MRR %.3f → %.3f", before.Recall, after.Recall, before.MRR, after.MRR)
	}
}

// BenchmarkQuality prints the quality measures with `make bench`.
func BenchmarkQuality(b *testing.B) {
	ix := goStdlibIndex(b)
	qs := qualityQueries(b)
	var before, after evaluation.Metrics
	for b.Loop() {
		var err error
		if before, err = evaluation.Retrieval(b.Context(), ix, qs, 10); err != nil {
			b.Fatal(err)
		}
		if after, err = evaluation.Enriched(b.Context(), ix, qs, 10); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(before.Recall, "recall@10")
	b.ReportMetric(before.MRR, "MRR")
	b.ReportMetric(after.Recall, "enriched-recall@10")
	b.ReportMetric(after.MRR, "enriched-MRR")
}
