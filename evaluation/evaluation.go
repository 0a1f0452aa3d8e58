// SPDX-License-Identifier: Apache-2.0

// Package evaluation measures retrieval quality: recall@k and MRR of the
// search index over a set of queries with known relevant documents, before
// and after the enrichment worker's de-duplication and re-ranking (package
// rerank). It is an offline tool: it depends on no Kafka client and not on the
// OpenTelemetry SDK.
package evaluation

import (
	"context"
	"fmt"

	"github.com/kretrieve/kretrieve/rerank"
	"github.com/kretrieve/kretrieve/search"
)

// Query is one evaluation query and the ids of its relevant documents.
type Query struct {
	Query    string
	Relevant []string
}

// Metrics are averaged over the queries.
type Metrics struct {
	Queries int `json:"queries"`
	// K is the cut-off of both measures.
	K int `json:"k"`
	// Recall is the mean share of each query's relevant documents found in
	// its top K.
	Recall float64 `json:"recall"`
	// MRR is the mean reciprocal rank of each query's first relevant
	// document in its top K (0 when none is there).
	MRR float64 `json:"mrr"`
	// Misses lists the queries with no relevant document in the top K.
	Misses []string `json:"misses,omitempty"`
}

// Index is what evaluation needs of a search index.
type Index interface {
	Search(ctx context.Context, query string, k int) ([]search.Hit, error)
	Document(id string) (search.Document, bool)
}

// Retrieval measures the index's own ranking at k.
func Retrieval(ctx context.Context, ix Index, queries []Query, k int) (Metrics, error) {
	return evaluate(ctx, queries, k, func(q string) ([]string, map[string]string, error) {
		hits, err := ix.Search(ctx, q, k)
		if err != nil {
			return nil, nil, err
		}
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return ids, nil, nil
	})
}

// Enriched measures the ranking after the enrichment worker's de-duplication
// and re-ranking (rerank.DedupeMap and rerank.Rerank) over the index's top
// k, as the pipeline produces it. A relevant
// document dropped as a near-duplicate counts as found at the rank of the
// document that stands in for it.
func Enriched(ctx context.Context, ix Index, queries []Query, k int) (Metrics, error) {
	return evaluate(ctx, queries, k, func(q string) ([]string, map[string]string, error) {
		hits, err := ix.Search(ctx, q, k)
		if err != nil {
			return nil, nil, err
		}
		scored := make([]rerank.Scored, 0, len(hits))
		for _, h := range hits {
			d, ok := ix.Document(h.ID)
			if !ok {
				return nil, nil, fmt.Errorf("hit %s has no document", h.ID)
			}
			scored = append(scored, rerank.Scored{Doc: d, BM25: h.Score})
		}
		scored, dups := rerank.DedupeMap(scored, rerank.DefaultDuplicateThreshold)
		scored = rerank.Rerank(q, scored)
		ids := make([]string, len(scored))
		for i, s := range scored {
			ids[i] = s.Doc.ID
		}
		return ids, dups, nil
	})
}

// evaluate ranks each query with rank, which returns the ranked ids and,
// optionally, documents dropped as duplicates of a ranked id.
func evaluate(ctx context.Context, queries []Query, k int, rank func(string) ([]string, map[string]string, error)) (Metrics, error) {
	m := Metrics{Queries: len(queries), K: k}
	if len(queries) == 0 {
		return m, nil
	}
	for _, q := range queries {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		ids, dups, err := rank(q.Query)
		if err != nil {
			return m, fmt.Errorf("query %q: %w", q.Query, err)
		}
		rankOf := make(map[string]int, len(ids))
		for i, id := range ids {
			if i < k {
				rankOf[id] = i + 1
			}
		}
		found, first := 0, 0
		for _, id := range q.Relevant {
			r, ok := rankOf[id]
			if !ok {
				r, ok = rankOf[dups[id]]
			}
			if !ok {
				continue
			}
			found++
			if first == 0 || r < first {
				first = r
			}
		}
		if len(q.Relevant) > 0 {
			m.Recall += float64(found) / float64(len(q.Relevant))
		}
		if first > 0 {
			m.MRR += 1 / float64(first)
		} else {
			m.Misses = append(m.Misses, q.Query)
		}
	}
	m.Recall /= float64(len(queries))
	m.MRR /= float64(len(queries))
	return m, nil
}
