package deadletters_test

import (
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/messages"
)

// Topics of the tests.
const (
	requests      = messages.DefaultRequestsTopic
	requestsDLQ   = requests + messages.DLQSuffix
	candidates    = messages.DefaultCandidatesTopic
	candidatesDLQ = candidates + messages.DLQSuffix
)

// traceparent returns a sampled W3C traceparent for the given ids.
func traceparent(traceID, spanID string) string { return "00-" + traceID + "-" + spanID + "-01" }

// letter describes a dead letter to write.
type letter struct {
	partition   int32 // of the dead-letter topic
	key         string
	reason      string
	errorType   string
	origTopic   string
	origPart    int32
	origOffset  int64
	attempts    int
	traceparent string
	extra       []kgo.RecordHeader // before the dead-letter headers, as the original's
}

// record builds the record the consumers' dead-letter writer produces for a
// failed record (Build): the original key, value and
// headers, then the kretrieve.dlq.* headers.
func (l letter) record(dlqTopic string) *kgo.Record {
	hs := append([]kgo.RecordHeader{}, l.extra...)
	if l.traceparent != "" {
		hs = append(hs, kgo.RecordHeader{Key: "traceparent", Value: []byte(l.traceparent)})
	}
	add := func(k, v string) { hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
	add(deadletters.HeaderReason, l.reason)
	add(deadletters.HeaderErrorType, l.errorType)
	add(deadletters.HeaderOriginalTopic, l.origTopic)
	add(deadletters.HeaderOriginalPartition, strconv.Itoa(int(l.origPart)))
	add(deadletters.HeaderOriginalOffset, strconv.FormatInt(l.origOffset, 10))
	add(deadletters.HeaderOriginalTimestamp, origTime.UTC().Format(time.RFC3339Nano))
	add(deadletters.HeaderAttempts, strconv.Itoa(l.attempts))
	add(deadletters.HeaderConsumerGroup, "retrieval")
	return &kgo.Record{
		Topic:     dlqTopic,
		Partition: l.partition,
		Key:       []byte(l.key),
		Value:     []byte(fmt.Sprintf(`{"request_id":%q,"query":"q"}`, l.key)),
		Headers:   hs,
	}
}

var origTime = time.Date(2026, 3, 1, 12, 30, 45, 123456789, time.UTC)
