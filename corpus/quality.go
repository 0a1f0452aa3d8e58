// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
)

// qualityJSON is the retrieval quality set; see QualitySet for its format.
//
//go:embed quality.json
var qualityJSON []byte

// QualityQuery is one query of the retrieval quality set with the IDs of
// the Go corpus documents ([GoStdlib]) that answer it.
type QualityQuery struct {
	// Query is what a Go developer would type, in their own words.
	Query string `json:"query"`
	// Relevant lists one to three document IDs, best first.
	Relevant []string `json:"relevant"`
}

// QualitySet returns the embedded retrieval quality set, a fresh copy on
// each call, for measuring recall and ranking over the Go corpus.
//
// The set is the file quality.json in this package: a JSON array of
// objects, one per query, each with a "query" string and a "relevant"
// array of one to three document IDs from [GoStdlib]'s output:
//
//	[
//	  {"query": "read a file line by line", "relevant": ["bufio.Scanner", "bufio.NewScanner"]},
//	  {"query": "convert string to integer", "relevant": ["strconv.Atoi"]}
//	]
//
// Queries are unique. The tests check that every relevant ID exists in the
// corpus extracted from the current Go release, so the set cannot rot.
func QualitySet() ([]QualityQuery, error) {
	dec := json.NewDecoder(bytes.NewReader(qualityJSON))
	dec.DisallowUnknownFields()
	var qs []QualityQuery
	if err := dec.Decode(&qs); err != nil {
		return nil, fmt.Errorf("decode quality set: %w", err)
	}
	seen := make(map[string]bool, len(qs))
	for i, q := range qs {
		switch {
		case q.Query == "":
			return nil, fmt.Errorf("quality query %d: empty query", i)
		case seen[q.Query]:
			return nil, fmt.Errorf("quality query %d: duplicate query %q", i, q.Query)
		case len(q.Relevant) == 0 || len(q.Relevant) > 3:
			return nil, fmt.Errorf("quality query %q: %d relevant ids, want 1 to 3", q.Query, len(q.Relevant))
		}
		for _, id := range q.Relevant {
			if id == "" {
				return nil, fmt.Errorf("quality query %q: empty relevant id", q.Query)
			}
		}
		seen[q.Query] = true
	}
	return qs, nil
}
