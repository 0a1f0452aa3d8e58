// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordAt returns a record with the given timestamp and timestamp type.
func recordAt(ts time.Time, logAppend bool) *kgo.Record {
	r := &kgo.Record{Timestamp: ts}
	if logAppend {
		r.Attrs = kgo.NewRecordAttrs(kgo.RecordAttrsOpts{TimestampType: 1})
	}
	return r
}

func TestComputeQueueWait(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		rec      *kgo.Record
		wait     time.Duration
		skew     time.Duration
		typ      string
		startsAt time.Time
	}{
		{"create time", recordAt(now.Add(-250*time.Millisecond), false), 250 * time.Millisecond, 0, CreateTime, now.Add(-250 * time.Millisecond)},
		{"log append time", recordAt(now.Add(-3*time.Second), true), 3 * time.Second, 0, LogAppendTime, now.Add(-3 * time.Second)},
		{"same instant", recordAt(now, false), 0, 0, CreateTime, now},
		{"producer clock ahead", recordAt(now.Add(40*time.Millisecond), false), 0, 40 * time.Millisecond, CreateTime, now},
		{"broker clock ahead", recordAt(now.Add(2*time.Second), true), 0, 2 * time.Second, LogAppendTime, now},
		{"no timestamp", recordAt(time.UnixMilli(-1), false), 0, 0, NoTimestamp, now},
		{"zero timestamp", recordAt(time.UnixMilli(0), false), 0, 0, NoTimestamp, now},
		// Found by FuzzComputeQueueWait: the skew saturates, it does not
		// overflow into a negative duration.
		{"timestamp centuries ahead", recordAt(time.UnixMilli(math.MaxInt64), false), 0, math.MaxInt64, CreateTime, now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qw := ComputeQueueWait(tt.rec, now)
			if qw.Wait != tt.wait || qw.Skew != tt.skew || qw.TimestampType != tt.typ {
				t.Fatalf("got wait=%v skew=%v type=%s, want wait=%v skew=%v type=%s", qw.Wait, qw.Skew, qw.TimestampType, tt.wait, tt.skew, tt.typ)
			}
			if !qw.Start.Equal(tt.startsAt) || !qw.End.Equal(now) {
				t.Fatalf("span %v..%v, want %v..%v", qw.Start, qw.End, tt.startsAt, now)
			}
			if qw.End.Before(qw.Start) || qw.Wait < 0 {
				t.Fatalf("negative wait: %+v", qw)
			}
		})
	}
}

// FuzzComputeQueueWait checks the queue wait of any record timestamp (in
// milliseconds, as on the wire) against any consumer clock: never
// negative, never both a wait and a skew, the span never ends before it
// starts, and wait or skew is the exact distance between the two clocks
// (saturated at the longest duration).
//
// The input is bytes rather than integers so that the fuzzer mutates every
// bit (its integer mutations only add or subtract small numbers): the
// timestamp in milliseconds, the timestamp type and the consumer clock's
// seconds and nanoseconds, little-endian, missing bytes read as zero.
func FuzzComputeQueueWait(f *testing.F) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, s := range []struct {
		ts  time.Time
		typ int8
	}{
		{now.Add(-250 * time.Millisecond), 0},
		{now.Add(-3 * time.Second), 1},
		{now.Add(40 * time.Millisecond), 0},
		{now, 1},
		{time.UnixMilli(-1), 0},
		{time.UnixMilli(0), -1},
		{now.Add(-time.Second), -1},
	} {
		f.Add(queueWaitInput(s.ts.UnixMilli(), s.typ, now.Unix(), int64(now.Nanosecond())))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		in = append(in, make([]byte, 25)...)
		tsMillis, typ := int64(binary.LittleEndian.Uint64(in)), int8(in[8])
		nowSec, nowNsec := int64(binary.LittleEndian.Uint64(in[9:])), int64(binary.LittleEndian.Uint64(in[17:]))
		ts, now := time.UnixMilli(tsMillis), time.Unix(nowSec, nowNsec)
		r := &kgo.Record{Timestamp: ts, Attrs: kgo.NewRecordAttrs(kgo.RecordAttrsOpts{TimestampType: typ})}
		qw := ComputeQueueWait(r, now)
		if !qw.End.Equal(now) {
			t.Fatalf("end %v, want now %v", qw.End, now)
		}
		if qw.Wait < 0 || qw.Skew < 0 || (qw.Wait > 0 && qw.Skew > 0) {
			t.Fatalf("timestamp %v, now %v: wait %v skew %v", ts, now, qw.Wait, qw.Skew)
		}
		if qw.Start.After(qw.End) {
			t.Fatalf("starts %v after it ends %v", qw.Start, qw.End)
		}
		switch {
		case typ < 0 || ts.UnixMilli() <= 0:
			if qw.TimestampType != NoTimestamp || !qw.Start.Equal(now) || qw.Wait != 0 || qw.Skew != 0 {
				t.Fatalf("unusable timestamp %v (type %d): %+v", ts, typ, qw)
			}
		case ts.After(now):
			if !qw.Start.Equal(now) || qw.Wait != 0 || qw.Skew != ts.Sub(now) {
				t.Fatalf("timestamp %v after now %v: %+v", ts, now, qw)
			}
		default:
			if !qw.Start.Equal(ts) || qw.Wait != now.Sub(ts) || qw.Skew != 0 {
				t.Fatalf("timestamp %v before now %v: %+v", ts, now, qw)
			}
		}
		if want := map[bool]string{true: LogAppendTime, false: CreateTime}[typ > 0]; qw.TimestampType != NoTimestamp && qw.TimestampType != want {
			t.Fatalf("timestamp type %q for attrs type %d", qw.TimestampType, typ)
		}
	})
}

// queueWaitInput encodes FuzzComputeQueueWait's input.
func queueWaitInput(tsMillis int64, typ int8, nowSec, nowNsec int64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(tsMillis))
	b = append(b, byte(typ))
	b = binary.LittleEndian.AppendUint64(b, uint64(nowSec))
	return binary.LittleEndian.AppendUint64(b, uint64(nowNsec))
}
