// SPDX-License-Identifier: Apache-2.0

// Package dlq lists and replays kretrieve's dead-letter topics
// (<topic>.dlq, see messages.DLQTopic), whose records package deadletters
// builds and parses. It is the operator's wing: `kretrieve dlq list|replay`
// and the console use it.
//
// [List] reads dead-letter topics from their start to their end as of the
// call, without a consumer group, and returns the letters in (topic,
// partition, offset) order.
//
// [Replay] republishes dead letters to the topic their dead-letter topic
// belongs to (X.dlq to X, a pipeline topic of [ReplayConfig].Targets), never
// to a topic a letter's header names: a letter whose header disagrees is
// refused. Each replay is the root of a new trace ("replay <dlq topic>",
// instrumentation scope [ScopeName]) linked to the dead letter's trace; the republished record
// keeps key, value and the original headers but not the kretrieve.dlq.* or
// trace-context headers. Progress is committed to a consumer group only
// after the broker acknowledged the republished record, so the next Replay
// with the same group starts after it. Replay's settings are a
// [ReplayConfig]; its tracer provider and logger are Options
// ([WithTracerProvider], [WithLogger]), defaulting to the global provider
// and slog.Default().
//
// The package uses the OpenTelemetry API only, never the SDK (a test checks
// it with go list -deps). Of kretrieve it imports only deadletters,
// kafkatrace, messages, otelnames and internal/global; it does not import
// producer/, consumers/ or pipeline/.
package dlq
