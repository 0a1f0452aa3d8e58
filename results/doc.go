// SPDX-License-Identifier: Apache-2.0

// Package results consumes the results topic, and the dead-letter topics,
// and hands each result to the request awaiting it.
//
// A Collector reads the outcome records (results and dead letters) inside
// the consumer runtime's consumers.Trace middleware, so with the same wait
// and process spans as the workers, and delivers each request's first
// outcome to whoever claimed it (Claim, by request id and the request's
// messages.HeaderCorrelation value, or Expect, by request id alone),
// counting duplicates, late and foreign outcomes
// (kretrieve.results.dropped). It checks its topics' partitions every
// metadata interval and says when it is behind (Ready).
//
// producer.Client composes a producer.Publisher and a Collector: it claims
// the outcome of each request it publishes and runs the Collector until it
// is closed. Required inputs are NewCollector's arguments; its one
// collaborator is an Option, WithLogger (default slog.Default()).
//
// It uses the OpenTelemetry API only, never the SDK.
package results
