// SPDX-License-Identifier: Apache-2.0

// Package redact records requests on spans without their user data: queries
// as their length and hash, never as text, and request ids kretrieve did not
// generate as their hash. The attribute keys are otelnames's.
package redact

import (
	"strconv"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/otel/attribute"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
)

// Request returns the attribute identifying a request: the id itself when
// kretrieve generated it, otherwise its hash.
func Request(id string) attribute.KeyValue {
	if messages.IsGeneratedRequestID(id) {
		return otelnames.RequestID.String(id)
	}
	return otelnames.RequestIDHash.String(strconv.FormatUint(xxhash.Sum64String(id), 16))
}

// Query returns the length and hash attributes of a query.
func Query(q string) []attribute.KeyValue {
	return []attribute.KeyValue{
		otelnames.QueryLength.Int(len(q)),
		otelnames.QueryHash.String(strconv.FormatUint(xxhash.Sum64String(q), 16)),
	}
}
