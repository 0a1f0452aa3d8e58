// SPDX-License-Identifier: Apache-2.0

// Package conformance checks spans against the OpenTelemetry messaging
// semantic conventions (the version kretrieve follows, semconv 1.43) and
// against kretrieve's own rules for Kafka traces: Check, for any spans, and
// CheckRequest, for one request's trace and its shape (Hops from the
// topology). It works on kretrieve's backend-neutral span record,
// spans.Span, so anyone can run it against traces of their own services
// from any of package spans' sources (spans.Jaeger, a spans file, the
// in-process store) or any other backend. Package conformancetest runs it
// on both test tiers.
package conformance
