// SPDX-License-Identifier: Apache-2.0

package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// matchTextQuery is the query Search built before term de-duplication and
// MaxQueryTerms (bleve's MatchQuery on each field): the reference that
// TestSearchRanksNormalQueriesAsBefore compares with.
func matchTextQuery(text string) query.Query {
	match := func(field, text string, boost float64) query.Query {
		q := bleve.NewMatchQuery(text)
		q.SetField(field)
		q.SetBoost(boost)
		return q
	}
	return bleve.NewDisjunctionQuery(
		match(fieldName, text, boostName),
		match(fieldTitle, text, boostTitle),
		match(fieldBody, text, boostBody),
		match(fieldContext, text, boostContext),
	)
}

// qualityQueries returns the queries of the Go corpus quality set
// (corpus/quality.json) and of TestSearchRanksObviousDocumentFirst.
func qualityQueries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "corpus", "quality.json"))
	if err != nil {
		t.Fatal(err)
	}
	var set []struct{ Query string }
	if err := json.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	qs := append([]string(nil), benchQueries...)
	for _, s := range set {
		qs = append(qs, s.Query)
	}
	if len(qs) < 100 {
		t.Fatalf("only %d queries", len(qs))
	}
	return qs
}

// repeatsTerm reports whether text, analysed for any searched field, has a
// term twice.
func repeatsTerm(t *testing.T, ix *Index, text string) bool {
	t.Helper()
	m := ix.idx.Mapping()
	for _, f := range []string{fieldName, fieldTitle, fieldBody, fieldContext} {
		seen := make(map[string]bool)
		for _, tok := range m.AnalyzerNamed(m.AnalyzerNameForPath(f)).Analyze([]byte(text)) {
			if seen[string(tok.Term)] {
				return true
			}
			seen[string(tok.Term)] = true
		}
	}
	return false
}

// TestSearchRanksNormalQueriesAsBefore checks that de-duplication and the
// term cap leave normal queries alone: every query of the quality set whose
// terms are distinct gets exactly the hits and scores (all MaxK of them) of
// the MatchQuery Search used before.
func TestSearchRanksNormalQueriesAsBefore(t *testing.T) {
	// The demo corpus of corpus/corpustest (which imports this
	// package, so it is read here as a file).
	demo := mustMemory(t, "demo", jsonlDocs(t, filepath.Join("..", "corpus", "corpustest", "demo_corpus.jsonl")))
	compared := 0
	for name, ix := range map[string]*Index{"small": mustMemory(t, "small", smallDocs(t)), "demo": demo} {
		for _, text := range qualityQueries(t) {
			if repeatsTerm(t, ix, text) {
				continue
			}
			compared++
			q, err := ix.textQuery(t.Context(), text)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ix.search(t.Context(), q, MaxK, true)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ix.search(t.Context(), matchTextQuery(text), MaxK, true)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %q:\n got %v\nwant %v", name, text, got, want)
			}
		}
	}
	if compared < 200 {
		t.Errorf("compared only %d queries", compared)
	}
}

// TestSearchRepeatedTermCountsOnce: a term repeated to MaxQueryBytes ranks
// and scores as the term said once (security finding 6 of issue 16).
func TestSearchRepeatedTermCountsOnce(t *testing.T) {
	ix := mustMemory(t, "bench", manyDocs(smallDocs(t), 10))
	for _, term := range []string{"url", "Query", "parse"} {
		repeated := strings.Repeat(term+" ", MaxQueryBytes/(len(term)+1))
		got, err := ix.Search(t.Context(), repeated, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ix.Search(t.Context(), term, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%q finds nothing", term)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q repeated: got %v, want the hits of %q once: %v", term, got[:min(3, len(got))], term, want[:min(3, len(want))])
		}
	}
}

// TestSearchClausesBounded: whatever the query, Search runs at most
// 4×MaxQueryTerms term clauses (one per distinct term and field), and
// reports the terms it dropped.
func TestSearchClausesBounded(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	var words []string
	for i := range 600 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	distinct := strings.Join(words, " ")
	if len(distinct) > MaxQueryBytes {
		t.Fatalf("query of %d bytes", len(distinct))
	}
	tests := []struct {
		query   string
		clauses int
		dropped int
	}{
		{"parse query", 4 * 2, 0},
		{strings.Repeat("go ", 1365), 4, 0},
		{strings.Repeat("parse query ", 341), 4 * 2, 0},
		{distinct, 4 * MaxQueryTerms, len(words) - MaxQueryTerms},
		{"the and of", 0, 0}, // stop words only
	}
	for _, tt := range tests {
		var plans []QueryPlan
		ctx := WithTrace(t.Context(), &Trace{QueryPlanned: func(p QueryPlan) { plans = append(plans, p) }})
		if _, err := ix.Search(ctx, tt.query, MaxK); err != nil {
			t.Fatal(err)
		}
		want := []QueryPlan{{Clauses: tt.clauses, DroppedTerms: tt.dropped}}
		if !reflect.DeepEqual(plans, want) {
			t.Errorf("%.30q: plans %+v, want %+v", tt.query, plans, want)
		}
	}
}

// TestSearchKeepsFirstTerms: over MaxQueryTerms distinct terms, the first
// ones are searched and the rest dropped.
func TestSearchKeepsFirstTerms(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	var filler []string
	for i := range MaxQueryTerms {
		filler = append(filler, fmt.Sprintf("zz%d", i))
	}
	first, err := ix.Search(t.Context(), "gzip "+strings.Join(filler, " "), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) == 0 || first[0].ID != "compress/gzip" {
		t.Errorf("gzip first: hits %v", ids(first))
	}
	last, err := ix.Search(t.Context(), strings.Join(filler, " ")+" gzip", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 0 {
		t.Errorf("gzip after %d terms: hits %v, want none", MaxQueryTerms, ids(last))
	}
}

// TestSearchDeadline: a search whose context's deadline has passed fails
// with context.DeadlineExceeded, so the caller can tell it from a bad query.
func TestSearchDeadline(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	ctx, cancel := context.WithTimeout(t.Context(), 0)
	defer cancel()
	_, err := ix.Search(ctx, strings.Repeat("go ", 1365), MaxK)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want context.DeadlineExceeded", err)
	}
}
