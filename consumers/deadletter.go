package consumers

import (
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
)

// maxReasonBytes caps the reason header so a huge error cannot bloat the record.
const maxReasonBytes = 1024

// deadLetter builds the dead-letter record for rec: the original key, value
// and headers (trace context included) plus headers saying why, where from
// and after how many attempts. Dead-letter headers from an earlier trip
// through a dead-letter topic are replaced, not repeated.
func deadLetter(rec *kgo.Record, err error, attempts int, group string) *kgo.Record {
	reason := err.Error()
	if len(reason) > maxReasonBytes {
		reason = strings.ToValidUTF8(reason[:maxReasonBytes], "")
	}
	headers := make([]kgo.RecordHeader, 0, len(rec.Headers)+8)
	for _, h := range rec.Headers {
		if !strings.HasPrefix(h.Key, "kretrieve.dlq.") {
			headers = append(headers, h)
		}
	}
	add := func(k, v string) { headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
	add(messages.HeaderDLQReason, reason)
	add(messages.HeaderDLQErrorType, errorKind(err))
	add(messages.HeaderDLQOriginalTopic, rec.Topic)
	add(messages.HeaderDLQOriginalPartition, strconv.Itoa(int(rec.Partition)))
	add(messages.HeaderDLQOriginalOffset, strconv.FormatInt(rec.Offset, 10))
	add(messages.HeaderDLQOriginalTimestamp, rec.Timestamp.UTC().Format(time.RFC3339Nano))
	add(messages.HeaderDLQAttempts, strconv.Itoa(attempts))
	if group != "" {
		add(messages.HeaderDLQConsumerGroup, group)
	}
	return &kgo.Record{
		Topic:   messages.DLQTopic(rec.Topic),
		Key:     rec.Key,
		Value:   rec.Value,
		Headers: headers,
	}
}
