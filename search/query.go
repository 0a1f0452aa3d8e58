// SPDX-License-Identifier: Apache-2.0

package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Limits on Search and Highlight arguments. They match the limits of the
// request messages (messages.MaxTopK, messages.MaxQueryBytes).
const (
	// MaxK is the largest k Search accepts; the smallest is 1.
	MaxK = 100
	// MaxQueryBytes is the longest query text accepted, in bytes.
	MaxQueryBytes = 4096
	// MaxQueryTerms caps the distinct terms of a query searched in one
	// field: a field keeps the first MaxQueryTerms distinct terms of the
	// analysed query, in query order, and drops the rest (QueryPlan
	// reports how many). A query so bounds its cost at 4×MaxQueryTerms term
	// clauses, whatever its text; the queries of the quality set have at
	// most 12 terms.
	MaxQueryTerms = 32
)

// Query-time boosts of the fields searched. Tuned on the Go corpus quality
// set (evaluation package): equal weights for identifier words, body and the
// package context did best, with a light title boost; a heavier identifier
// boost lets names that are everyday words ("Line", "Root", "Convert") crowd
// out the right API.
const (
	boostName    = 1.0
	boostTitle   = 0.3
	boostBody    = 1.0
	boostContext = 1.0
)

// ErrInvalidQuery is returned (wrapped) for arguments out of range: k not in
// 1..MaxK, a query longer than MaxQueryBytes, a snippet size below 1.
// Retrying the same call cannot succeed.
var ErrInvalidQuery = errors.New("invalid query")

// Hit is a scored search result.
type Hit struct {
	// ID is the document's id.
	ID string
	// Score is the document's BM25 score; only its order is meaningful.
	Score float64
}

// Search returns up to k documents matching query, best BM25 score first;
// equal scores are ordered by id, so results are deterministic.
//
// query is plain text, not a query language: it is analysed like the
// documents and matched against their identifiers and titles (boosted) and
// bodies; a document matching any term is a candidate. A query with no
// searchable terms (blank, or only stop words) finds nothing. k must be in
// 1..MaxK.
func (ix *Index) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	if k < 1 || k > MaxK {
		return nil, fmt.Errorf("search: k %d not in 1..%d: %w", k, MaxK, ErrInvalidQuery)
	}
	if err := checkQuery(query); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if strings.TrimSpace(query) == "" {
		return []Hit{}, nil
	}
	q, err := ix.textQuery(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	// Sorting by score then id makes bleve load the id of every matching
	// document. Instead, fetch one hit more than asked, by score alone, and
	// order equal scores by id here; only if the hit after the k-th ties with
	// it (so which of them make the top k depends on the order) ask bleve to
	// sort by id too.
	hits, err := ix.search(ctx, q, k+1, false)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if len(hits) > k && hits[k].Score == hits[k-1].Score {
		hits, err = ix.search(ctx, q, k, true)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))], nil
}

// search runs q for the size best hits, by score and, if byID, then by id.
func (ix *Index) search(ctx context.Context, q query.Query, size int, byID bool) ([]Hit, error) {
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	order := bsearch.SortOrder{&bsearch.SortScore{Desc: true}}
	if byID {
		order = append(order, &bsearch.SortDocID{})
	}
	req.SortByCustom(order)
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = Hit{ID: h.ID, Score: h.Score}
	}
	return hits, nil
}

// checkQuery enforces MaxQueryBytes.
func checkQuery(q string) error {
	if len(q) > MaxQueryBytes {
		return fmt.Errorf("query of %d bytes exceeds %d: %w", len(q), MaxQueryBytes, ErrInvalidQuery)
	}
	return nil
}

// textQuery matches text against the name, title, body and context fields,
// each analysed and bounded by fieldQuery, and reports its plan to ctx's
// Trace.
func (ix *Index) textQuery(ctx context.Context, text string) (query.Query, error) {
	var plan QueryPlan
	fields := []struct {
		name  string
		boost float64
	}{{fieldName, boostName}, {fieldTitle, boostTitle}, {fieldBody, boostBody}, {fieldContext, boostContext}}
	qs := make([]query.Query, len(fields))
	for i, f := range fields {
		q, fp, err := ix.fieldQuery(f.name, text, f.boost)
		if err != nil {
			return nil, err
		}
		qs[i] = q
		plan.Clauses += fp.Clauses
		plan.DroppedTerms = max(plan.DroppedTerms, fp.DroppedTerms)
	}
	if t := traceFrom(ctx); t != nil && t.QueryPlanned != nil {
		t.QueryPlanned(plan)
	}
	return bleve.NewDisjunctionQuery(qs...), nil
}

// fieldQuery matches any term of text, analysed with field's analyzer, in
// field. It is bleve's MatchQuery (so a query of distinct terms ranks
// exactly as a MatchQuery ranks it) except that each distinct term is
// searched once, however often the text repeats it, and at most
// MaxQueryTerms distinct terms are searched.
func (ix *Index) fieldQuery(field, text string, boost float64) (query.Query, QueryPlan, error) {
	m := ix.idx.Mapping()
	analyzer := m.AnalyzerNamed(m.AnalyzerNameForPath(field))
	if analyzer == nil {
		return nil, QueryPlan{}, fmt.Errorf("no analyzer for field %s", field)
	}
	var (
		terms []query.Query
		seen  = make(map[string]bool)
		plan  QueryPlan
	)
	for _, tok := range analyzer.Analyze([]byte(text)) {
		term := string(tok.Term)
		if seen[term] {
			continue
		}
		seen[term] = true
		if len(terms) == MaxQueryTerms {
			plan.DroppedTerms++
			continue
		}
		tq := bleve.NewTermQuery(term)
		tq.SetField(field)
		tq.SetBoost(boost)
		terms = append(terms, tq)
	}
	if len(terms) == 0 {
		return bleve.NewMatchNoneQuery(), plan, nil
	}
	plan.Clauses = len(terms)
	q := bleve.NewDisjunctionQuery(terms...)
	q.SetMin(1)
	q.SetBoost(boost)
	return q, plan, nil
}
