// SPDX-License-Identifier: Apache-2.0

package deadletters

import (
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
)

// Failure is what a dead letter records about why its record failed.
type Failure struct {
	// Reason is the error text (HeaderReason). Build keeps its first KiB.
	// It must not quote the record's content.
	Reason string
	// ErrorType is ErrorTypePermanent or ErrorTypeTransient (HeaderErrorType).
	ErrorType string
	// Attempts is how many times the record was tried (HeaderAttempts).
	Attempts int
	// ConsumerGroup is the group that gave up (HeaderConsumerGroup); ""
	// leaves the header out.
	ConsumerGroup string
}

// maxReasonBytes caps the reason header so a huge error cannot bloat the record.
const maxReasonBytes = 1024

// Size estimates of a dead letter, on the safe side: a record batch of one
// record adds 61 bytes of batch header and up to about 30 of record
// framing; each header adds two length varints.
const (
	recordOverhead = 100
	headerOverhead = 10
	// truncatedHeaderBytes is room for the HeaderTruncated header.
	truncatedHeaderBytes = 96
	// minimalKeyBytes is the longest key a minimal dead letter keeps.
	minimalKeyBytes = 256
	// maxCorrelationBytes is the longest messages.HeaderCorrelation value
	// kept with the dead-letter headers; a longer one is an original
	// header like any other.
	maxCorrelationBytes = 128
)

// Build returns the dead-letter record of rec, which failed as f says: a
// record for messages.DLQTopic(rec.Topic) with the original key, value
// and headers (trace context included) plus the kretrieve.dlq.* headers
// saying why, where from and after how many attempts. Dead-letter headers
// from an earlier trip through a dead-letter topic are replaced, not
// repeated. rec is not modified.
//
// A dead letter that would exceed maxBytes (0: no limit) keeps what fits and
// says so in a HeaderTruncated header: the dead-letter headers always,
// then the key (when it takes at most a quarter of the room left), the
// original headers in order (whole, while they take at most half of it) and
// a prefix of the value in the rest. A messages.HeaderCorrelation header
// is kept with the dead-letter headers, in every letter.
func Build(rec *kgo.Record, f Failure, maxBytes int) *kgo.Record {
	return build(rec, f, maxBytes, false)
}

// BuildMinimal returns the dead letter of rec for a topic that refused the
// one from Build as too large: the dead-letter headers, the key when it
// is short, and a HeaderTruncated header; no value, no original headers.
func BuildMinimal(rec *kgo.Record, f Failure) *kgo.Record {
	return build(rec, f, 0, true)
}

func build(rec *kgo.Record, f Failure, maxBytes int, minimal bool) *kgo.Record {
	reason := f.Reason
	if len(reason) > maxReasonBytes {
		reason = strings.ToValidUTF8(reason[:maxReasonBytes], "")
	}
	orig := make([]kgo.RecordHeader, 0, len(rec.Headers))
	var corr []byte
	for _, h := range rec.Headers {
		switch {
		case h.Key == messages.HeaderCorrelation && len(h.Value) <= maxCorrelationBytes:
			corr = h.Value // the last one, as HeaderCarrier reads it
		case !strings.HasPrefix(h.Key, HeaderPrefix):
			orig = append(orig, h)
		}
	}
	dlq := make([]kgo.RecordHeader, 0, 10)
	add := func(k, v string) { dlq = append(dlq, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
	if corr != nil {
		// Kept in every letter, even a minimal one: it hands the outcome
		// to the call waiting for it.
		dlq = append(dlq, kgo.RecordHeader{Key: messages.HeaderCorrelation, Value: corr})
	}
	add(HeaderReason, reason)
	add(HeaderErrorType, f.ErrorType)
	add(HeaderOriginalTopic, rec.Topic)
	add(HeaderOriginalPartition, strconv.Itoa(int(rec.Partition)))
	add(HeaderOriginalOffset, strconv.FormatInt(rec.Offset, 10))
	add(HeaderOriginalTimestamp, rec.Timestamp.UTC().Format(time.RFC3339Nano))
	add(HeaderAttempts, strconv.Itoa(f.Attempts))
	if f.ConsumerGroup != "" {
		add(HeaderConsumerGroup, f.ConsumerGroup)
	}

	key, value, kept := rec.Key, rec.Value, orig
	full := recordOverhead + len(key) + len(value) + headersSize(orig) + headersSize(dlq)
	switch {
	case minimal:
		if len(key) > minimalKeyBytes {
			key = nil
		}
		value, kept = nil, nil
	case maxBytes > 0 && full > maxBytes:
		room := max(maxBytes-recordOverhead-headersSize(dlq)-truncatedHeaderBytes, 0)
		if len(key) > room/4 {
			key = nil
		}
		room -= len(key)
		kept = nil
		used := 0
		for _, h := range orig {
			n := len(h.Key) + len(h.Value) + headerOverhead
			if used+n > room/2 {
				break
			}
			kept = append(kept, h)
			used += n
		}
		room -= used
		value = value[:min(len(value), room)]
	}
	headers := append(kept[:len(kept):len(kept)], dlq...)
	if len(key) != len(rec.Key) || len(value) != len(rec.Value) || len(kept) != len(orig) {
		headers = append(headers, kgo.RecordHeader{Key: HeaderTruncated, Value: []byte(
			"key=" + strconv.Itoa(len(key)) + "/" + strconv.Itoa(len(rec.Key)) +
				" headers=" + strconv.Itoa(len(kept)) + "/" + strconv.Itoa(len(orig)) +
				" value=" + strconv.Itoa(len(value)) + "/" + strconv.Itoa(len(rec.Value)))})
	}
	return &kgo.Record{
		Topic:   messages.DLQTopic(rec.Topic),
		Key:     key,
		Value:   value,
		Headers: headers,
	}
}

func headersSize(hs []kgo.RecordHeader) int {
	n := headerOverhead * len(hs)
	for _, h := range hs {
		n += len(h.Key) + len(h.Value)
	}
	return n
}
