// Package attrs declares the span attributes about requests that several
// kretrieve components record, once, with the helpers that keep user data
// out of them: queries are recorded as their length and hash, never as text,
// and request ids kretrieve did not generate as their hash.
//
// Attributes owned by one component (the Kafka spans' kretrieve.queue_wait.*,
// the search span's kretrieve.search.*) are declared in that component.
package attrs

import (
	"strconv"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/otel/attribute"

	"github.com/kretrieve/kretrieve/messages"
)

// Request attributes.
const (
	// RequestID is a request id kretrieve generated (messages.NewRequestID),
	// which carries no user data. Use [Request] to record an id.
	RequestID = attribute.Key("kretrieve.request.id")
	// RequestIDHash is the hex xxhash64 of any other request id: one chosen
	// by an outside producer, or adopted from a record key, may be anything.
	RequestIDHash = attribute.Key("kretrieve.request.id_hash")
	// QueryLength is the query's length in bytes.
	QueryLength = attribute.Key("kretrieve.query.length")
	// QueryHash is the hex xxhash64 of the query text.
	QueryHash = attribute.Key("kretrieve.query.hash")
)

// Request returns the attribute identifying a request: the id itself when
// kretrieve generated it, otherwise its hash.
func Request(id string) attribute.KeyValue {
	if messages.IsGeneratedRequestID(id) {
		return RequestID.String(id)
	}
	return RequestIDHash.String(strconv.FormatUint(xxhash.Sum64String(id), 16))
}

// Query returns the length and hash attributes of a query.
func Query(q string) []attribute.KeyValue {
	return []attribute.KeyValue{
		QueryLength.Int(len(q)),
		QueryHash.String(strconv.FormatUint(xxhash.Sum64String(q), 16)),
	}
}
