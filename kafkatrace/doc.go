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
// The package uses the OpenTelemetry API only, never the SDK: the caller
// supplies tracer, meter and propagator (or the globals are used). It does not
// import producer/ or consumers/; both import it.
package kafkatrace
