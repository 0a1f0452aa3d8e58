// SPDX-License-Identifier: Apache-2.0

// Package tracecontext holds the W3C Trace Context and Baggage limits and
// the trust boundary, for Kafka headers and HTTP alike, and the carrier of
// trace context in Kafka record headers ([HeaderCarrier]: last header wins,
// Set leaves no duplicates, nothing allocated to read).
//
// Trace context arriving from outside is untrusted input:
//
//   - a traceparent longer than [MaxTraceparentLen] is ignored, and over
//     HTTP several traceparent fields are invalid;
//   - tracestate is cut to whole members within [MaxTraceStateLen]
//     characters and [MaxTraceStateMembers] members, reading at most
//     [MaxTraceStateScan] bytes ([LimitTraceState]);
//   - baggage over [MaxBaggageBytes] is dropped ([LimitBaggage]);
//   - several tracestate or baggage fields are joined, then limited.
//
// [LimitPropagator] applies these rules to any carrier before its
// propagator parses it; [TrustBoundaryPropagator] also keeps only the
// allowed baggage, for a server whose spans start new roots (the HTTP
// gateway). kafkatrace applies the same limits to record headers, and
// encodes and parses traceparent directly ([AppendTraceparent],
// [ParseTraceparent]) when the propagator is W3C's ([W3CFields]).
//
// The package uses the OpenTelemetry API only, never the SDK, and of Kafka
// only franz-go's kgo, for the record type (a test checks it with go list).
package tracecontext
