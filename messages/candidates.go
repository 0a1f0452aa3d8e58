// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Candidate is one document found by retrieval, before enrichment.
type Candidate struct {
	// DocID identifies the document; it must not be empty.
	DocID string `json:"doc_id"`
	// Score is the retrieval score, higher is better; it must be finite.
	Score float64 `json:"score"`
	// Version is the version of the document that retrieval scored
	// (search.Document.Hash), empty when its index does not know
	// versions; by the rules of [MaxVersionBytes].
	Version string `json:"version,omitempty"`
}

// Candidates is what a retrieval worker publishes for one request: the
// request itself and the candidate documents, best first.
type Candidates struct {
	// SchemaVersion is the payload version. Zero means [SchemaVersion];
	// [EncodeCandidates] always writes [SchemaVersion].
	SchemaVersion int `json:"schema_version"`
	// RequestID is the id of the request, following the request_id rules
	// of [Request]; it must not be empty.
	RequestID string `json:"request_id"`
	// Query is the request's query, following the rules of [Request].
	Query string `json:"query"`
	// TopK is the request's top_k, [MinTopK] to [MaxTopK].
	TopK int `json:"top_k"`
	// Candidates holds at most TopK candidates. A nil slice is written as [].
	Candidates []Candidate `json:"candidates"`
	// Timings holds the retrieval timings.
	Timings Timings `json:"timings"`
	// IndexFreshness holds the freshness of the index of each stage so
	// far that reports one; left out when empty.
	IndexFreshness IndexFreshness `json:"index_freshness,omitempty"`
}

// Validate reports, as a [*ValidationError], the first field of c that
// breaks the rules documented on [Candidates] and [Candidate].
func (c Candidates) Validate() error {
	v := validator{payload: PayloadCandidates}
	v.check(checkSchemaVersion(c.SchemaVersion), named("schema_version"))
	v.check(checkRequestID(c.RequestID), named("request_id"))
	v.check(checkQuery(c.Query), named("query"))
	v.check(checkTopK(c.TopK), named("top_k"))
	if v.err == nil && len(c.Candidates) > c.TopK {
		v.check("must have at most top_k ("+strconv.Itoa(c.TopK)+") items", named("candidates"))
	}
	for i, cand := range c.Candidates {
		if v.err != nil {
			break
		}
		if cand.DocID == "" {
			v.check(reasonEmpty, func() string { return loc{"candidates", i}.field("doc_id") })
		}
		v.check(checkFinite(cand.Score), func() string { return loc{"candidates", i}.field("score") })
		v.check(checkVersion(cand.Version), func() string { return loc{"candidates", i}.field("version") })
	}
	v.checkTimings(c.Timings)
	v.checkFreshness(c.IndexFreshness)
	return v.err
}

// EncodeCandidates validates c and returns it as JSON with schema_version
// set to [SchemaVersion].
func EncodeCandidates(c Candidates) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.SchemaVersion = SchemaVersion
	if c.Candidates == nil {
		c.Candidates = []Candidate{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode candidates: %w", err)
	}
	return b, nil
}

// DecodeCandidates decodes and validates a candidates record value.
//
// The value must be a single JSON object, or a [*DecodeError] is returned.
// Member names are case-sensitive, unknown members are ignored and a null
// member counts as absent. schema_version follows the rules of
// [DecodeRequest]; request_id, query, top_k and candidates are required,
// and each candidate needs doc_id and score (version is optional); timings
// and its durations may be absent (zero), index_freshness too (nil). Any broken rule is returned as a [*ValidationError].
// Invalid UTF-8 is rejected as in [DecodeRequest].
// The returned Candidates slice is never nil.
func DecodeCandidates(b []byte) (Candidates, error) {
	obj, err := decodeObject(PayloadCandidates, b)
	if err != nil {
		return Candidates{}, err
	}
	d := newDecoder(PayloadCandidates, b)
	d.schemaVersion(obj)
	c := Candidates{
		SchemaVersion: SchemaVersion,
		RequestID:     d.string(obj, top, "request_id", true),
		Query:         d.string(obj, top, "query", true),
		TopK:          d.int(obj, top, "top_k", true),
	}
	items := d.array(obj, top, "candidates", true)
	c.Candidates = make([]Candidate, 0, len(items))
	for i, raw := range items {
		l := loc{parent: "candidates", index: i}
		item := d.object(raw, l, true)
		c.Candidates = append(c.Candidates, Candidate{
			DocID:   d.string(item, l, "doc_id", true),
			Score:   d.float(item, l, "score", true),
			Version: d.string(item, l, "version", false),
		})
	}
	c.Timings = d.timings(obj)
	c.IndexFreshness = d.freshness(obj)
	if err := d.result(); err != nil {
		return Candidates{}, err
	}
	if err := c.Validate(); err != nil {
		return Candidates{}, err
	}
	return c, nil
}
