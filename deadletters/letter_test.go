// SPDX-License-Identifier: Apache-2.0

package deadletters_test

import (
	dltest "github.com/kretrieve/kretrieve/deadletters/deadletterstest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/messages"
)

const (
	traceA = "0af7651916cd43dd8448eb211c80319c"
	spanA  = "b7ad6b7169203331"
)

func TestFromRecordParsesDeadLetterHeaders(t *testing.T) {
	rec := dltest.Letter{
		Partition: 2, Key: "req-1", Reason: "invalid request: query: required", ErrorType: deadletters.ErrorTypePermanent,
		OrigTopic: requests, OrigPart: 4, OrigOffset: 1234, Attempts: 3, Traceparent: dltest.Traceparent(traceA, spanA),
		Extra: []kgo.RecordHeader{{Key: "content-type", Value: []byte("application/json")}},
	}.Record(requestsDLQ)
	rec.Offset, rec.Timestamp = 7, time.Unix(1_700_000_000, 0)

	l := deadletters.FromRecord(rec)
	want := deadletters.Letter{
		Topic: requestsDLQ, Partition: 2, Offset: 7, Timestamp: rec.Timestamp,
		Key: rec.Key, Value: rec.Value, Headers: rec.Headers,
		Reason: "invalid request: query: required", ErrorType: "permanent",
		OriginalTopic: requests, OriginalPartition: 4, OriginalOffset: 1234, OriginalTimestamp: dltest.OrigTime,
		Attempts: 3, ConsumerGroup: "retrieval", TraceID: traceA,
	}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("FromRecord =\n%+v\nwant\n%+v", l, want)
	}
	if target, err := l.Target(); err != nil || target != requests {
		t.Fatalf("Target = %q, %v", target, err)
	}
}

// TestFromRecordToleratesGarbage: whatever the headers hold, FromRecord
// returns what it can parse and leaves the rest zero.
func TestFromRecordToleratesGarbage(t *testing.T) {
	h := func(kv ...string) []kgo.RecordHeader {
		var hs []kgo.RecordHeader
		for i := 0; i+1 < len(kv); i += 2 {
			hs = append(hs, kgo.RecordHeader{Key: kv[i], Value: []byte(kv[i+1])})
		}
		return hs
	}
	tests := []struct {
		name    string
		rec     *kgo.Record
		check   func(deadletters.Letter) bool
		comment string
	}{
		{"nil record", nil, func(l deadletters.Letter) bool { return l.Topic == "" && l.Headers == nil }, "zero letter"},
		{"no headers", &kgo.Record{Topic: requestsDLQ, Offset: 3},
			func(l deadletters.Letter) bool {
				return l.Offset == 3 && l.Reason == "" && l.Attempts == 0 && l.OriginalTimestamp.IsZero() && l.TraceID == ""
			}, "location only"},
		{"nil header values", &kgo.Record{Headers: []kgo.RecordHeader{{Key: deadletters.HeaderAttempts}, {Key: "traceparent"}}},
			func(l deadletters.Letter) bool { return l.Attempts == 0 && l.TraceID == "" }, "zero"},
		{"non-numeric", &kgo.Record{Headers: h(deadletters.HeaderOriginalPartition, "two", deadletters.HeaderOriginalOffset, "0x10", deadletters.HeaderAttempts, "many")},
			func(l deadletters.Letter) bool {
				return l.OriginalPartition == 0 && l.OriginalOffset == 0 && l.Attempts == 0
			}, "zero"},
		{"negative", &kgo.Record{Headers: h(deadletters.HeaderOriginalPartition, "-1", deadletters.HeaderOriginalOffset, "-5", deadletters.HeaderAttempts, "-2")},
			func(l deadletters.Letter) bool {
				return l.OriginalPartition == 0 && l.OriginalOffset == 0 && l.Attempts == 0
			}, "zero"},
		{"overflow", &kgo.Record{Headers: h(deadletters.HeaderOriginalPartition, "2147483648", deadletters.HeaderOriginalOffset, "99999999999999999999", deadletters.HeaderAttempts, "99999999999999999999")},
			func(l deadletters.Letter) bool {
				return l.OriginalPartition == 0 && l.OriginalOffset == 0 && l.Attempts == 0
			}, "zero"},
		{"spaces", &kgo.Record{Headers: h(deadletters.HeaderOriginalPartition, " 3", deadletters.HeaderAttempts, "3 ")},
			func(l deadletters.Letter) bool { return l.OriginalPartition == 0 && l.Attempts == 0 }, "zero"},
		{"bad timestamps", &kgo.Record{Headers: h(deadletters.HeaderOriginalTimestamp, "yesterday")},
			func(l deadletters.Letter) bool { return l.OriginalTimestamp.IsZero() }, "zero"},
		{"offset timestamp", &kgo.Record{Headers: h(deadletters.HeaderOriginalTimestamp, "2026-03-01T13:30:45+01:00")},
			func(l deadletters.Letter) bool {
				return l.OriginalTimestamp.Equal(time.Date(2026, 3, 1, 12, 30, 45, 0, time.UTC))
			}, "parsed, in UTC"},
		{"malformed traceparent", &kgo.Record{Headers: h("traceparent", "00-00000000000000000000000000000000-b7ad6b7169203331-01")},
			func(l deadletters.Letter) bool { return l.TraceID == "" }, "no trace id"},
		{"uppercase traceparent", &kgo.Record{Headers: h("traceparent", strings.ToUpper(dltest.Traceparent(traceA, spanA)))},
			func(l deadletters.Letter) bool { return l.TraceID == "" }, "no trace id"},
		{"invalid UTF-8", &kgo.Record{Headers: h(deadletters.HeaderReason, "bad \xff\xfe", deadletters.HeaderOriginalTopic, "\xff")},
			func(l deadletters.Letter) bool { return l.Reason == "bad \xff\xfe" && l.OriginalTopic == "\xff" }, "kept as is"},
		{"duplicates: last wins", &kgo.Record{Headers: h(deadletters.HeaderAttempts, "1", deadletters.HeaderAttempts, "4", "traceparent", "junk", "traceparent", dltest.Traceparent(traceA, spanA))},
			func(l deadletters.Letter) bool { return l.Attempts == 4 && l.TraceID == traceA }, "last"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if l := deadletters.FromRecord(tt.rec); !tt.check(l) {
				t.Fatalf("FromRecord = %+v, want %s", l, tt.comment)
			}
		})
	}
}

func TestLetterTarget(t *testing.T) {
	tests := []struct {
		name, topic, origTopic, want, err string
	}{
		{"header", requestsDLQ, requests, requests, ""},
		{"header wins over the name", "custom-dead-letters", candidates, candidates, ""},
		{"no header: name minus suffix", candidatesDLQ, "", candidates, ""},
		{"no header, no suffix", "custom-dead-letters", "", "", "no original topic"},
		{"into a dead-letter topic", requestsDLQ, requestsDLQ, "", "dead-letter topic"},
		{"illegal name", requestsDLQ, "retrieval requests", "", "illegal character"},
		{"dot", requestsDLQ, "..", "", "not a legal topic name"},
		{"too long", requestsDLQ, strings.Repeat("t", messages.MaxTopicLen+1), "", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deadletters.Letter{Topic: tt.topic, OriginalTopic: tt.origTopic}.Target()
			if tt.err == "" && (err != nil || got != tt.want) {
				t.Fatalf("Target = %q, %v; want %q", got, err, tt.want)
			}
			if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Target = %q, %v; want an error with %q", got, err, tt.err)
			}
		})
	}
}

// FuzzFromRecord: no header content makes FromRecord panic, and a trace id
// is only ever reported in W3C form.
func FuzzFromRecord(f *testing.F) {
	f.Add("3", "12", "2026-03-01T12:30:45Z", "2", dltest.Traceparent(traceA, spanA))
	f.Add("", "", "", "", "")
	f.Add("-1", "x", "yesterday", "99999999999999999999", "ff-"+traceA+"-"+spanA+"-01")
	f.Fuzz(func(t *testing.T, partition, offset, ts, attempts, tp string) {
		rec := &kgo.Record{Headers: []kgo.RecordHeader{
			{Key: deadletters.HeaderOriginalPartition, Value: []byte(partition)},
			{Key: deadletters.HeaderOriginalOffset, Value: []byte(offset)},
			{Key: deadletters.HeaderOriginalTimestamp, Value: []byte(ts)},
			{Key: deadletters.HeaderAttempts, Value: []byte(attempts)},
			{Key: "traceparent", Value: []byte(tp)},
		}}
		l := deadletters.FromRecord(rec)
		if l.OriginalPartition < 0 || l.OriginalOffset < 0 || l.Attempts < 0 {
			t.Fatalf("negative values: %+v", l)
		}
		if l.TraceID != "" && (len(l.TraceID) != 32 || !strings.Contains(tp, l.TraceID)) {
			t.Fatalf("trace id %q from %q", l.TraceID, tp)
		}
	})
}
