// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Request asks kretrieve for the documents that best match a query. It is
// the public contract that users' own producers write, as JSON, to the
// requests topic.
type Request struct {
	// SchemaVersion is the payload version. Zero means [SchemaVersion];
	// [EncodeRequest] always writes [RequestWireVersion].
	SchemaVersion int `json:"schema_version,omitempty"`
	// RequestID correlates the request with its result: valid UTF-8, at
	// most [MaxRequestIDLen] characters, no control characters and no
	// leading or trailing whitespace. On the wire it may be absent or empty, in which
	// case [DecodeRequest] generates one with [NewRequestID].
	RequestID string `json:"request_id"`
	// Query is the search text: 1 to [MaxQueryBytes] bytes of valid UTF-8,
	// not only whitespace.
	Query string `json:"query"`
	// TopK is the number of documents wanted, [MinTopK] to [MaxTopK]. On
	// the wire it may be absent or null, meaning [DefaultTopK].
	TopK int `json:"top_k"`
}

// WithDefaults returns r with its unset fields filled the way
// [DecodeRequest] fills them: SchemaVersion with [SchemaVersion], an empty
// RequestID with [NewRequestID] and a zero TopK with [DefaultTopK].
func (r Request) WithDefaults() Request {
	if r.SchemaVersion == 0 {
		r.SchemaVersion = SchemaVersion
	}
	if r.RequestID == "" {
		r.RequestID = NewRequestID()
	}
	if r.TopK == 0 {
		r.TopK = DefaultTopK
	}
	return r
}

// Validate reports, as a [*ValidationError], the first field of r that
// breaks the rules documented on [Request]. Unlike the wire format, the
// value must be complete: RequestID must be set and TopK in range; use
// [Request.WithDefaults] to fill them.
func (r Request) Validate() error {
	v := validator{payload: PayloadRequest}
	v.check(checkSchemaVersion(r.SchemaVersion), named("schema_version"))
	v.check(checkRequestID(r.RequestID), named("request_id"))
	v.check(checkQuery(r.Query), named("query"))
	v.check(checkTopK(r.TopK), named("top_k"))
	return v.err
}

// RequestWireVersion is the schema_version [EncodeRequest] writes. The
// request payload is the same in every version so far, so it stays 1: a
// retrieval worker that reads only version 1 still takes requests from an
// upgraded producer, and the upgrade order of readers before writers (the
// gateway reads results and writes requests) has no cycle.
const RequestWireVersion = 1

// EncodeRequest validates r and returns it as JSON with schema_version set
// to [RequestWireVersion].
func EncodeRequest(r Request) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return marshalRequest(r)
}

// CanonicalRequest decodes and validates b exactly as [DecodeRequest] does
// and returns the request with its encoding as [EncodeRequest] writes it.
// A request read from outside (the gateway's HTTP body) is so validated
// once, here, and published as it was checked.
func CanonicalRequest(b []byte) (Request, []byte, error) {
	r, err := DecodeRequest(b)
	if err != nil {
		return Request{}, nil, err
	}
	value, err := marshalRequest(r)
	if err != nil {
		return Request{}, nil, err
	}
	return r, value, nil
}

// marshalRequest encodes r, which is valid, with schema_version set to
// [RequestWireVersion].
func marshalRequest(r Request) ([]byte, error) {
	r.SchemaVersion = RequestWireVersion
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}

// DecodeRequest decodes and validates a request record value.
//
// The value must be a single JSON object, or a [*DecodeError] is returned.
// Member names are case-sensitive, unknown members are ignored and a null
// member counts as absent. The whole value must be valid UTF-8: a string
// field that is not is a [*ValidationError], invalid UTF-8 anywhere else a
// [*DecodeError], both matching [ErrInvalidUTF8]. A schema_version
// that is absent or 0 means 1; one above [SchemaVersion] or negative is
// unsupported. An absent or empty request_id is replaced by
// [NewRequestID], and an absent top_k by [DefaultTopK]. top_k must be a
// JSON number with an integer value (10 and 10.0 are the same, as in JSON
// Schema). Any other broken rule is returned as a [*ValidationError].
//
// The returned request is complete: SchemaVersion is [SchemaVersion],
// RequestID is set and TopK is in range.
func DecodeRequest(b []byte) (Request, error) {
	return decodeRequest(b, nil)
}

// DecodeRequestKeyed is DecodeRequest for a record whose key is the request
// id: when the value has no request_id, a key that is a valid request id is
// used instead of a generated one, so redeliveries of a keyed record keep
// their id. A key that is not a valid request id is ignored.
func DecodeRequestKeyed(value, key []byte) (Request, error) {
	return decodeRequest(value, key)
}

func decodeRequest(b, key []byte) (Request, error) {
	obj, err := decodeObject(PayloadRequest, b)
	if err != nil {
		return Request{}, err
	}
	d := newDecoder(PayloadRequest, b)
	d.schemaVersion(obj)
	r := Request{
		SchemaVersion: SchemaVersion,
		RequestID:     d.string(obj, top, "request_id", false),
		Query:         d.string(obj, top, "query", true),
		TopK:          DefaultTopK,
	}
	if present(obj, "top_k") {
		r.TopK = d.int(obj, top, "top_k", true)
	}
	if err := d.result(); err != nil {
		return Request{}, err
	}
	if r.RequestID == "" && len(key) > 0 && utf8.Valid(key) && checkRequestID(string(key)) == "" {
		r.RequestID = string(key)
	}
	if r.RequestID == "" {
		r.RequestID = NewRequestID()
	}
	if err := r.Validate(); err != nil {
		return Request{}, err
	}
	return r, nil
}
