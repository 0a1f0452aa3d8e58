package deadletters

import "go.opentelemetry.io/otel/attribute"

// ScopeName is the instrumentation scope of the replay spans.
const ScopeName = "github.com/kretrieve/kretrieve/deadletters"

// OpReplay names the root span of a replay: "replay <dlq topic>".
const OpReplay = "replay"

// Attributes of the replay span. messaging.system and
// messaging.destination.name (the topic the letter is republished to) come
// from semconv.
const (
	// ReasonAttr is the dead letter's kretrieve.dlq.reason header.
	ReasonAttr = attribute.Key("kretrieve.dlq.reason")
	// ErrorTypeAttr is the dead letter's kretrieve.dlq.error_type header.
	ErrorTypeAttr = attribute.Key("kretrieve.dlq.error_type")
	// AttemptsAttr is the dead letter's kretrieve.dlq.attempts header.
	AttemptsAttr = attribute.Key("kretrieve.dlq.attempts")
	// TopicAttr is the dead-letter topic the letter was read from.
	TopicAttr = attribute.Key("kretrieve.dlq.topic")
	// PartitionAttr is the dead letter's partition in TopicAttr.
	PartitionAttr = attribute.Key("kretrieve.dlq.partition")
	// OffsetAttr is the dead letter's offset in its partition.
	OffsetAttr = attribute.Key("kretrieve.dlq.offset")
)
