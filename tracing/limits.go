// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"fmt"
	"strconv"
)

// DefaultAttributeValueLengthLimit is the length, in characters, to which
// Setup cuts string (and byte slice) attribute values of spans and log
// records when no OTEL_*ATTRIBUTE_VALUE_LENGTH_LIMIT variable is set; the
// Go SDK's own default is no limit. Attribute values can come from clients
// (a 1 MB User-Agent went into spans and grew the gateway to 708 MB, and
// span batches over the 64 MB export limit were dropped with other users'
// spans). 4096 keeps every value kretrieve records whole: a query is at
// most 4 KiB (messages.MaxQueryBytes) and real header values, URLs and
// error messages are shorter; a span's attributes are then bounded by the
// SDK's count limit (128) times 4096 characters.
const DefaultAttributeValueLengthLimit = 4096

// Attribute limit variables of the OpenTelemetry specification, read by
// Setup (the SDK reads some of them too, but has no safe default and does
// not read the general one for log records).
const (
	envAttributeValueLength          = "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"
	envSpanAttributeValueLength      = "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT"
	envLogRecordAttributeValueLength = "OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT"
)

// attributeValueLengthLimit returns the limit of the first of names (most
// specific first) that is set, else DefaultAttributeValueLengthLimit. A
// negative value means no limit, as in the SDK; a value that is not an
// integer is an error naming the variable.
func attributeValueLengthLimit(getenv func(string) string, names ...string) (int, error) {
	for _, name := range names {
		v := lookup(getenv, name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q: want a number of characters (negative: no limit)", name, v)
		}
		return n, nil
	}
	return DefaultAttributeValueLengthLimit, nil
}

// attributeLimits returns the attribute value length limits of spans
// (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, else
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) and log records
// (OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT, else the general one).
func attributeLimits(getenv func(string) string) (spans, logs int, err error) {
	if spans, err = attributeValueLengthLimit(getenv, envSpanAttributeValueLength, envAttributeValueLength); err != nil {
		return 0, 0, err
	}
	if logs, err = attributeValueLengthLimit(getenv, envLogRecordAttributeValueLength, envAttributeValueLength); err != nil {
		return 0, 0, err
	}
	return spans, logs, nil
}
