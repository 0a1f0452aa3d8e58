// SPDX-License-Identifier: Apache-2.0

// Package otelnames names what kretrieve emits: span names, kretrieve.*
// attribute keys, metric names and units. It imports only the OTel
// attribute API.
//
// Semantic-convention names (messaging.*, error.type, the messaging client
// metrics) come from go.opentelemetry.io/otel/semconv where they are
// recorded; this package holds kretrieve's own vocabulary, so that a reader
// finds every name in one place and the telemetry reference is tested
// against it.
package otelnames
