// SPDX-License-Identifier: Apache-2.0

// Package messages owns kretrieve's Kafka contract: the JSON payloads that
// flow between the pipeline stages, the default topic names and the record
// header names.
//
// Records flow through three topics:
//
//	retrieval.requests   --retrieval workers-->  retrieval.candidates
//	retrieval.candidates --enrichment workers--> retrieval.results
//
// A [Request] is the public contract: users' own producers write it, so
// [DecodeRequest] is lenient where it can be (unknown fields are ignored,
// request_id and top_k have defaults) and strict everywhere else. A
// [Candidates] payload is written by the retrieval workers and a [Result]
// by the enrichment workers; both are produced and consumed only by
// kretrieve. Every payload carries a schema_version; this code writes
// [SchemaVersion] and reads every version up to it.
//
// Decode and validation failures are permanent: retrying the record cannot
// help. They are reported as [*DecodeError] or [*ValidationError], both
// matched by errors.Is(err, [ErrInvalid]), so that a consumer can send the
// record to its dead-letter topic ([DLQTopic]), with the headers that package
// deadletters names and builds, and a machine-friendly [Reason]. Error texts name
// fields, byte offsets and rules, never the content of the record (which is
// user data): they are recorded on spans, in logs and in dead-letter
// headers. Invalid UTF-8 anywhere in a record value is rejected, matched by
// errors.Is(err, [ErrInvalidUTF8]).
//
// JSON Schema (draft 2020-12) documents for the three payloads are embedded
// and returned by [Schema]; tests keep them in agreement with the decoders.
//
// This package imports only the standard library. Every other kretrieve
// package may import it; it must never import them, franz-go or
// OpenTelemetry.
package messages
