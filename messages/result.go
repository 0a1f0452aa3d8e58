// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Document is one enriched document of a [Result].
type Document struct {
	// ID identifies the document; it must not be empty.
	ID string `json:"id"`
	// Title is the document's title; it may be empty.
	Title string `json:"title"`
	// Score is the retrieval score, higher is better; it must be finite.
	Score float64 `json:"score"`
	// Snippet is an excerpt matching the query; it may be empty.
	Snippet string `json:"snippet"`
	// URL locates the document, if it has an address.
	URL string `json:"url,omitempty"`
	// Source names where the document came from, if known.
	Source string `json:"source,omitempty"`
	// Kind is the document's kind ("package", "func", "type", "method",
	// "const", "var" for the Go corpus), if known.
	Kind string `json:"kind,omitempty"`
	// ImportPath is the Go import path, for Go corpus documents.
	ImportPath string `json:"import_path,omitempty"`
	// Metadata holds the document's extra string fields, if any.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Version is the version of the document that Title, Snippet and the
	// other fields come from (search.Document.Hash), empty when the
	// enrichment index does not know versions; by the rules of
	// [MaxVersionBytes].
	Version string `json:"version,omitempty"`
	// StaleScore reports that retrieval scored another version of the
	// document than Version (it changed between the stages): the fields
	// are Version's, the score is not quite. It requires a Version.
	StaleScore bool `json:"stale_score,omitempty"`
}

// Result is what an enrichment worker publishes for one request: the
// enriched documents, best first, and the timings of every stage.
type Result struct {
	// SchemaVersion is the payload version. Zero means [SchemaVersion];
	// [EncodeResult] always writes [SchemaVersion].
	SchemaVersion int `json:"schema_version"`
	// RequestID is the id of the request, following the request_id rules
	// of [Request]; it must not be empty.
	RequestID string `json:"request_id"`
	// Documents holds at most [MaxTopK] documents. A nil slice is written
	// as [].
	Documents []Document `json:"documents"`
	// Timings holds the retrieval and enrichment timings.
	Timings Timings `json:"timings"`
	// IndexFreshness holds the freshness of the index of each stage that
	// reports one; left out when empty.
	IndexFreshness IndexFreshness `json:"index_freshness,omitempty"`
	// Degraded, when not empty, marks the result degraded: a stage left
	// something out (snippets, say) because the caller's deadline was
	// near, at most [MaxStages] entries; left out when empty.
	Degraded []Degradation `json:"degraded,omitempty"`
}

// Validate reports, as a [*ValidationError], the first field of r that
// breaks the rules documented on [Result] and [Document]. Text fields are
// not checked for valid UTF-8: encoding replaces invalid bytes with U+FFFD.
func (r Result) Validate() error {
	v := validator{payload: PayloadResult}
	v.check(checkSchemaVersion(r.SchemaVersion), named("schema_version"))
	v.check(checkRequestID(r.RequestID), named("request_id"))
	if v.err == nil && len(r.Documents) > MaxTopK {
		v.check("must have at most "+strconv.Itoa(MaxTopK)+" items", named("documents"))
	}
	for i, doc := range r.Documents {
		if v.err != nil {
			break
		}
		if doc.ID == "" {
			v.check(reasonEmpty, func() string { return loc{"documents", i}.field("id") })
		}
		v.check(checkFinite(doc.Score), func() string { return loc{"documents", i}.field("score") })
		v.check(checkVersion(doc.Version), func() string { return loc{"documents", i}.field("version") })
		if doc.StaleScore && doc.Version == "" {
			v.check(reasonStaleNeedsVersion, func() string { return loc{"documents", i}.field("version") })
		}
	}
	v.checkTimings(r.Timings)
	v.checkFreshness(r.IndexFreshness)
	v.checkDegraded(r.Degraded)
	return v.err
}

// EncodeResult validates r and returns it as JSON with schema_version set
// to [SchemaVersion].
func EncodeResult(r Result) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	r.SchemaVersion = SchemaVersion
	if r.Documents == nil {
		r.Documents = []Document{}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return b, nil
}

// DecodeResult decodes and validates a result record value.
//
// The value must be a single JSON object, or a [*DecodeError] is returned.
// Member names are case-sensitive, unknown members are ignored and a null
// member counts as absent. schema_version follows the rules of
// [DecodeRequest]; request_id and documents are required, and each
// document needs id, title, score and snippet; url, source, kind,
// import_path, metadata (an object of strings), version and stale_score (a
// boolean, true only with a version) are optional, as are timings and its
// durations (zero), index_freshness (nil) and degraded (nil: a degraded
// entry needs stage, dropped and reason). Any broken rule is returned as a
// [*ValidationError]. Invalid UTF-8 is rejected as in [DecodeRequest]. The
// returned Documents slice is never nil.
func DecodeResult(b []byte) (Result, error) {
	obj, err := decodeObject(PayloadResult, b)
	if err != nil {
		return Result{}, err
	}
	d := newDecoder(PayloadResult, b)
	d.schemaVersion(obj)
	r := Result{
		SchemaVersion: SchemaVersion,
		RequestID:     d.string(obj, top, "request_id", true),
	}
	items := d.array(obj, top, "documents", true)
	r.Documents = make([]Document, 0, len(items))
	for i, raw := range items {
		l := loc{parent: "documents", index: i}
		item := d.object(raw, l, true)
		r.Documents = append(r.Documents, Document{
			ID:         d.string(item, l, "id", true),
			Title:      d.string(item, l, "title", true),
			Score:      d.float(item, l, "score", true),
			Snippet:    d.string(item, l, "snippet", true),
			URL:        d.string(item, l, "url", false),
			Source:     d.string(item, l, "source", false),
			Kind:       d.string(item, l, "kind", false),
			ImportPath: d.string(item, l, "import_path", false),
			Metadata:   d.stringMap(item, l, "metadata"),
			Version:    d.string(item, l, "version", false),
			StaleScore: d.bool(item, l, "stale_score"),
		})
	}
	r.Timings = d.timings(obj)
	r.IndexFreshness = d.freshness(obj)
	r.Degraded = d.degraded(obj)
	if err := d.result(); err != nil {
		return Result{}, err
	}
	if err := r.Validate(); err != nil {
		return Result{}, err
	}
	return r, nil
}
