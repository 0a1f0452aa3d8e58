// SPDX-License-Identifier: Apache-2.0

// Package deadletterstest writes dead-letter records by hand for tests: the
// record the consumers' runtime produces for a failed record, spelled out
// header by header rather than built by deadletters.Build, so that tests of
// reading dead letters (deadletters.FromRecord, ops/dlq's List and Replay)
// do not depend on the writer they check against.
package deadletterstest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
)

// OrigTime is the original record's timestamp in every Letter's record.
var OrigTime = time.Date(2026, 3, 1, 12, 30, 45, 123456789, time.UTC)

// ConsumerGroup is the group that gave up, in every Letter's record.
const ConsumerGroup = "retrieval"

// Traceparent returns a sampled W3C traceparent for the given ids.
func Traceparent(traceID, spanID string) string { return "00-" + traceID + "-" + spanID + "-01" }

// Letter describes a dead letter to write.
type Letter struct {
	Partition   int32 // of the dead-letter topic
	Key         string
	Reason      string
	ErrorType   string
	OrigTopic   string
	OrigPart    int32
	OrigOffset  int64
	Attempts    int
	Traceparent string
	Extra       []kgo.RecordHeader // before the dead-letter headers, as the original's
}

// Record builds the record the consumers' dead-letter writer produces for
// a failed record: the original key, value and headers, then the
// kretrieve.dlq.* headers.
func (l Letter) Record(dlqTopic string) *kgo.Record {
	hs := append([]kgo.RecordHeader{}, l.Extra...)
	if l.Traceparent != "" {
		hs = append(hs, kgo.RecordHeader{Key: "traceparent", Value: []byte(l.Traceparent)})
	}
	add := func(k, v string) { hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
	add(deadletters.HeaderReason, l.Reason)
	add(deadletters.HeaderErrorType, l.ErrorType)
	add(deadletters.HeaderOriginalTopic, l.OrigTopic)
	add(deadletters.HeaderOriginalPartition, strconv.Itoa(int(l.OrigPart)))
	add(deadletters.HeaderOriginalOffset, strconv.FormatInt(l.OrigOffset, 10))
	add(deadletters.HeaderOriginalTimestamp, OrigTime.UTC().Format(time.RFC3339Nano))
	add(deadletters.HeaderAttempts, strconv.Itoa(l.Attempts))
	add(deadletters.HeaderConsumerGroup, ConsumerGroup)
	return &kgo.Record{
		Topic:     dlqTopic,
		Partition: l.Partition,
		Key:       []byte(l.Key),
		Value:     []byte(fmt.Sprintf(`{"request_id":%q,"query":"q"}`, l.Key)),
		Headers:   hs,
	}
}
