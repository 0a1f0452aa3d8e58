package kafkatrace

import "go.opentelemetry.io/otel/attribute"

// Project attributes. Semantic-convention attributes come from semconv.
const (
	// KeyHashAttr is the xxhash64 of the record key, in hex: records can be
	// correlated by key without putting the key itself into telemetry.
	KeyHashAttr = attribute.Key("kretrieve.message.key_hash")
	// QueueWaitMSAttr is the queue wait in milliseconds (after clamping).
	QueueWaitMSAttr = attribute.Key("kretrieve.queue_wait.ms")
	// TimestampTypeAttr says which clock the record timestamp came from:
	// "CreateTime" (the producer's clock) or "LogAppendTime" (the broker's).
	TimestampTypeAttr = attribute.Key("kretrieve.queue_wait.timestamp_type")
	// OffsetLagAttr is the partition's offset lag when the record was fetched:
	// high watermark − offset − 1.
	OffsetLagAttr = attribute.Key("kretrieve.queue_wait.offset_lag")
	// ClockSkewAttr is true when the record timestamp lies in the consumer's
	// future, so the wait was clamped to zero.
	ClockSkewAttr = attribute.Key("kretrieve.queue_wait.clock_skew")
	// ClockSkewMSAttr is by how many milliseconds the timestamp lay in the future.
	ClockSkewMSAttr = attribute.Key("kretrieve.queue_wait.clock_skew_ms")
	// TraceContextInvalidAttr is set on a process span started as a new root
	// because the record carried a traceparent header that is not valid W3C.
	TraceContextInvalidAttr = attribute.Key("kretrieve.trace_context.invalid")
)

// Span operation names (the first word of each span name).
const (
	// OpSend names producer spans: "send <topic>".
	OpSend = "send"
	// OpWait names queue-wait spans: "wait <topic>".
	OpWait = "wait"
	// OpProcess names consumer spans: "process <topic>".
	OpProcess = "process"
)

// BaggageAttrPrefix prefixes the attributes that baggage members become on
// process spans, only for the keys listed with WithBaggageAttributes:
// "kretrieve.baggage.tenant" for the member "tenant". The prefix keeps
// baggage from overwriting any other attribute.
const BaggageAttrPrefix = "kretrieve.baggage."
