// Package kafkatrace creates kretrieve's OpenTelemetry spans for Kafka records
// and carries trace context in record headers.
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
// Spans go through the OpenTelemetry API only: the caller supplies the tracer
// provider and propagator (or the globals are used). Metrics are aggregated
// in memory by [Metrics] and handed to the SDK as a metric producer, which is
// the one place the package touches SDK types (metricdata). It does not
// import producer/ or consumers/; both import it.
//
// # Cost
//
// Tracing runs on every record, so the hot paths are kept lean (see
// BENCHMARKS.md for numbers):
//
//   - traceparent is encoded and parsed directly on the header bytes when the
//     propagator is W3C's (tracestate and baggage still go through the
//     library), checked against the library by a fuzz test;
//   - metrics are atomic additions on series cached per partition;
//   - with [WithParentBasedSampling], unsampled records start no spans at
//     all; sampled ones build their attributes only once the span is known
//     to be recording, from slices cached per partition.
package kafkatrace
