// SPDX-License-Identifier: Apache-2.0

package deadletters

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// Letter is a record read from a dead-letter topic.
type Letter struct {
	// Topic, Partition, Offset and Timestamp locate the dead letter itself.
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time

	// Key, Value and Headers are the dead letter's, shared with the record:
	// the original key and value, the original headers and the
	// kretrieve.dlq.* headers.
	Key     []byte
	Value   []byte
	Headers []kgo.RecordHeader

	// Reason is the error text (HeaderReason).
	Reason string
	// ErrorType is ErrorTypePermanent or ErrorTypeTransient
	// (or whatever the header says).
	ErrorType string
	// OriginalTopic, OriginalPartition, OriginalOffset and OriginalTimestamp
	// locate the record that failed.
	OriginalTopic     string
	OriginalPartition int32
	OriginalOffset    int64
	OriginalTimestamp time.Time
	// Attempts is how many times the record was tried.
	Attempts int
	// ConsumerGroup is the group that gave up on the record.
	ConsumerGroup string
	// Truncated is the kretrieve.dlq.truncated header: set when the letter
	// keeps only part of the original record (it was too large to
	// dead-letter whole), "" otherwise. Such a letter cannot be replayed.
	Truncated string
	// TraceID is the hex trace id of the dead letter's W3C traceparent
	// header (the failed request's trace), "" when there is none or it is
	// malformed.
	TraceID string
}

// FromRecord parses a dead-letter record. It never fails: a header that is
// missing, empty or cannot be parsed (a partition that is not a
// non-negative 32-bit number, a timestamp that is not RFC 3339) leaves its
// field at the zero value. When a header appears more than once the last one
// wins, as with tracecontext.HeaderCarrier.
func FromRecord(r *kgo.Record) Letter {
	if r == nil {
		return Letter{}
	}
	h := tracecontext.HeaderCarrier{Record: r}
	l := Letter{
		Topic:         r.Topic,
		Partition:     r.Partition,
		Offset:        r.Offset,
		Timestamp:     r.Timestamp,
		Key:           r.Key,
		Value:         r.Value,
		Headers:       r.Headers,
		Reason:        h.Get(HeaderReason),
		ErrorType:     h.Get(HeaderErrorType),
		OriginalTopic: h.Get(HeaderOriginalTopic),
		ConsumerGroup: h.Get(HeaderConsumerGroup),
		Truncated:     h.Get(HeaderTruncated),
	}
	if n, err := strconv.ParseInt(h.Get(HeaderOriginalPartition), 10, 32); err == nil && n >= 0 {
		l.OriginalPartition = int32(n)
	}
	if n, err := strconv.ParseInt(h.Get(HeaderOriginalOffset), 10, 64); err == nil && n >= 0 {
		l.OriginalOffset = n
	}
	if n, err := strconv.Atoi(h.Get(HeaderAttempts)); err == nil && n >= 0 {
		l.Attempts = n
	}
	if ts, err := time.Parse(time.RFC3339Nano, h.Get(HeaderOriginalTimestamp)); err == nil {
		l.OriginalTimestamp = ts.UTC()
	}
	// The dead letter's headers came from an outside producer: the same
	// W3C limits as every other extraction apply.
	if sc := trace.SpanContextFromContext(tracecontext.LimitPropagator(propagation.TraceContext{}).Extract(context.Background(), h)); sc.IsValid() {
		l.TraceID = sc.TraceID().String()
	}
	return l
}

// Target returns the topic a replay republishes l to: the
// kretrieve.dlq.original_topic header or, without it, the dead-letter topic's
// name minus messages.DLQSuffix. It refuses names Kafka would reject and
// dead-letter topics, so a replay never feeds a dead-letter topic.
func (l Letter) Target() (string, error) {
	topic := l.OriginalTopic
	if topic == "" {
		topic = strings.TrimSuffix(l.Topic, messages.DLQSuffix)
		if topic == l.Topic {
			return "", errors.New("no original topic header, and the topic name does not end with " + messages.DLQSuffix)
		}
	}
	if err := checkTopic(topic); err != nil {
		return "", fmt.Errorf("original topic %q: %w", topic, err)
	}
	return topic, nil
}

func checkTopic(topic string) error {
	switch {
	case topic == "" || topic == "." || topic == "..":
		return errors.New("not a legal topic name")
	case len(topic) > messages.MaxTopicLen:
		return fmt.Errorf("longer than %d characters", messages.MaxTopicLen)
	case strings.HasSuffix(topic, messages.DLQSuffix):
		return errors.New("is a dead-letter topic")
	}
	for i := 0; i < len(topic); i++ {
		c := topic[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("illegal character %q", c)
		}
	}
	return nil
}
