package kafkatrace

import (
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
