// SPDX-License-Identifier: Apache-2.0

// Package kafkatrace creates kretrieve's OpenTelemetry spans for Kafka records
// and carries trace context in record headers, through
// [tracecontext.HeaderCarrier].
//
// It follows the current OpenTelemetry messaging semantic conventions:
//
//   - "send <topic>" (PRODUCER) from the moment a record is produced until the
//     broker acknowledges it, installed as franz-go produce hooks;
//   - "wait <topic>" (INTERNAL), the queue-wait span, from the record's
//     timestamp until a worker starts processing it;
//   - "process <topic>" (CONSUMER), the handler's work, a child of the
//     producer's context and linked to it.
//
// The package uses the OpenTelemetry API only, never the SDK (a test checks
// it with go list -deps): the caller supplies the tracer provider and
// propagator as Options (WithTracerProvider, WithPropagator; without them
// the globals are used). Metrics are aggregated in memory by
// [Metrics]; tracing.NewMetricsProducer hands them to the SDK. It does not
// import producer/ or consumers/; both import it.
//
// # Pathways
//
// With [WithPathways], a Tracer also carries a pathway context (package
// pathway) in every record's pathway.HeaderKey header, whatever the trace
// sampling: it writes the header on each record it produces, continuing
// the pathway of the record being processed ([PathwayFromContext],
// [ContextWithPathway]), and reads it on each record it starts processing.
// At each of these checkpoints (service, consumer group, topic, direction)
// it records the edge latency from the previous checkpoint and the latency
// from the pathway's origin into the [Metrics] given with [WithMetrics],
// as the kretrieve.pathway.latency series (at most [DefaultMaxPathways],
// see [WithMaxPathways]; an overflow series takes the rest, and a series
// idle for [WithPathwayIdle] makes room for a new pathway), with trace
// exemplars. At a trust boundary ([WithTrustBoundary]) the header of a
// record processed is ignored, as its trace context is: its pathway
// starts there. [Tracer.CheckpointIn] takes the in checkpoint of a record
// processed outside StartProcess, such as a dead-letter replay. Without
// WithPathways no header is written and one found on a record is left
// alone.
//
// # Cost
//
// Tracing runs on every record, so the hot paths are kept lean (see
// BENCHMARKS.md for numbers):
//
//   - traceparent is encoded and parsed directly on the header bytes when the
//     propagator is W3C's (tracestate and baggage still go through the
//     library), checked against the library by a fuzz test;
//   - metrics are atomic additions on series cached per partition, and a
//     pathway checkpoint reuses the series it last used on the partition;
//   - with [WithParentBasedSampling], unsampled records start no spans at
//     all; sampled ones build their attributes only once the span is known
//     to be recording, from slices cached per partition.
//
// # Untrusted trace context
//
// Record headers are written by whoever produces, so [Tracer.Extract]
// treats them as untrusted input, with the limits of package tracecontext,
// whose LimitPropagator does the same for other carriers (the gateway's
// HTTP requests):
//
//   - a traceparent that breaks the W3C rules is ignored: spans start a new
//     root, and the record is processed as any other;
//   - when a key appears more than once, the last header wins (one backward
//     scan); over HTTP, several traceparent fields are invalid and several
//     tracestate or baggage fields are joined;
//   - tracestate is cut to whole members within
//     [tracecontext.MaxTraceStateLen] characters and
//     [tracecontext.MaxTraceStateMembers] members, baggage over
//     [tracecontext.MaxBaggageBytes] is dropped, before any parser sees
//     them and reading a bounded number of bytes, so a hostile header costs
//     little (BenchmarkExtractHostile).
//
// [WithTrustBoundary] makes a Tracer's consumers a trust boundary: process
// spans are new roots sampled by our own sampler and linked to the record's
// context, and only trusted baggage reaches handlers. Baggage becomes span
// attributes only for the keys given to [WithBaggageAttributes].
package kafkatrace
