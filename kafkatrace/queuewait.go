// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Timestamp types as Kafka reports them in the record attributes.
const (
	// CreateTime means the producer set the timestamp with its own clock.
	CreateTime = "CreateTime"
	// LogAppendTime means the broker set the timestamp when it appended the record.
	LogAppendTime = "LogAppendTime"
	// NoTimestamp marks records without a usable timestamp (pre-0.10 format or negative).
	NoTimestamp = "NoTimestamp"
)

// QueueWait is how long a record sat between its timestamp and the start of
// its processing.
type QueueWait struct {
	// Start is the record timestamp, or End when the timestamp is unusable or
	// lies in the future.
	Start time.Time
	// End is when processing started.
	End time.Time
	// Wait is End − Start, never negative.
	Wait time.Duration
	// Skew is how far the timestamp lay in the future (0 when it did not).
	Skew time.Duration
	// TimestampType is CreateTime, LogAppendTime or NoTimestamp.
	TimestampType string
}

// ComputeQueueWait returns the queue wait of a record processed at now.
// A timestamp after now (clock skew between producer or broker and consumer)
// yields a zero wait with Skew set, never a negative one. Both saturate at
// the longest time.Duration (about 292 years).
func ComputeQueueWait(r *kgo.Record, now time.Time) QueueWait {
	typ := CreateTime
	switch r.Attrs.TimestampType() {
	case 1:
		typ = LogAppendTime
	case -1:
		typ = NoTimestamp
	}
	if typ == NoTimestamp || r.Timestamp.UnixMilli() <= 0 {
		return QueueWait{Start: now, End: now, TimestampType: NoTimestamp}
	}
	qw := QueueWait{Start: r.Timestamp, End: now, TimestampType: typ}
	if r.Timestamp.After(now) {
		// Not -now.Sub(r.Timestamp): Sub saturates at the shortest
		// duration, whose negation overflows.
		qw.Start = now
		qw.Skew = r.Timestamp.Sub(now)
	} else {
		qw.Wait = now.Sub(r.Timestamp)
	}
	return qw
}

// Signed returns the wait with its sign: Wait, or −Skew when the record's
// timestamp lay in the future (clock skew between its producer or broker
// and this process). Timings report it so that skew shows as what it is,
// never as a silent 0.
func (qw QueueWait) Signed() time.Duration { return qw.Wait - qw.Skew }
