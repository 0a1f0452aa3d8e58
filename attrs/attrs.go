// Package attrs declares the span attributes about requests that several
// kretrieve components record, once, with the helpers that keep user data
// out of them: queries are recorded as their length and hash, never as text.
//
// Attributes owned by one component (the Kafka spans' kretrieve.queue_wait.*,
// the search span's kretrieve.search.*) are declared in that component.
package attrs

import (
	"strconv"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/otel/attribute"
)

// Request attributes.
const (
	// RequestID is the request id (not user data: generated or chosen by the producer).
	RequestID = attribute.Key("kretrieve.request.id")
	// QueryLength is the query's length in bytes.
	QueryLength = attribute.Key("kretrieve.query.length")
	// QueryHash is the hex xxhash64 of the query text.
	QueryHash = attribute.Key("kretrieve.query.hash")
)

// Query returns the length and hash attributes of a query.
func Query(q string) []attribute.KeyValue {
	return []attribute.KeyValue{
		QueryLength.Int(len(q)),
		QueryHash.String(strconv.FormatUint(xxhash.Sum64String(q), 16)),
	}
}
