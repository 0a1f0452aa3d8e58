// SPDX-License-Identifier: Apache-2.0

package deadletters

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
)

func header(r *kgo.Record, key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

func TestDeadLetterTruncation(t *testing.T) {
	const maxBytes = 1_000_000
	hdrs := func(n, size int) []kgo.RecordHeader {
		hs := make([]kgo.RecordHeader, n)
		for i := range hs {
			hs[i] = kgo.RecordHeader{Key: "h" + strings.Repeat("x", i%7), Value: bytes.Repeat([]byte{'v'}, size)}
		}
		return hs
	}
	tests := []struct {
		name      string
		rec       *kgo.Record
		truncated string // "" when the dead letter is whole
	}{
		{"small", &kgo.Record{Key: []byte("k"), Value: []byte("v"), Headers: hdrs(3, 10)}, ""},
		{"value too large", &kgo.Record{Key: []byte("req-1"), Value: bytes.Repeat([]byte{'v'}, 2<<20), Headers: hdrs(3, 10)},
			"key=5/5 headers=3/3 value="},
		{"headers too large", &kgo.Record{Key: []byte("req-2"), Value: []byte(`{"query":"x"}`), Headers: hdrs(2000, 1024)},
			"key=5/5 headers="},
		{"key too large", &kgo.Record{Key: bytes.Repeat([]byte{'k'}, 600_000), Value: bytes.Repeat([]byte{'v'}, 600_000)},
			"key=0/600000 headers=0/0 value="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.rec.Topic, tt.rec.Timestamp = "retrieval.requests", time.Now()
			dl := Build(tt.rec, Failure{Reason: "record key and value: over the limit", ErrorType: ErrorTypePermanent, Attempts: 1, ConsumerGroup: "retrieval"}, maxBytes)
			size := recordOverhead + len(dl.Key) + len(dl.Value) + headersSize(dl.Headers)
			if size > maxBytes {
				t.Errorf("dead letter of about %d bytes, over %d", size, maxBytes)
			}
			for _, k := range []string{HeaderReason, HeaderErrorType, HeaderOriginalTopic,
				HeaderOriginalOffset, HeaderAttempts, HeaderConsumerGroup} {
				if _, ok := header(dl, k); !ok {
					t.Errorf("header %s missing", k)
				}
			}
			got, truncated := header(dl, HeaderTruncated)
			if tt.truncated == "" {
				if truncated || !bytes.Equal(dl.Value, tt.rec.Value) || !bytes.Equal(dl.Key, tt.rec.Key) {
					t.Fatalf("a small record's dead letter was cut: %q", got)
				}
				return
			}
			if !truncated || !strings.HasPrefix(got, tt.truncated) {
				t.Fatalf("%s = %q (present %v), want prefix %q", HeaderTruncated, got, truncated, tt.truncated)
			}
			// What is kept is a prefix: whole headers in order, the start of the value.
			if !bytes.HasPrefix(tt.rec.Value, dl.Value) || len(dl.Value) == 0 {
				t.Errorf("value: %d bytes kept of %d, not a non-empty prefix", len(dl.Value), len(tt.rec.Value))
			}
			for i, h := range dl.Headers {
				if strings.HasPrefix(h.Key, "kretrieve.dlq.") {
					break
				}
				if h.Key != tt.rec.Headers[i].Key || !bytes.Equal(h.Value, tt.rec.Headers[i].Value) {
					t.Fatalf("header %d is not the original's", i)
				}
			}
		})
	}

	t.Run("minimal", func(t *testing.T) {
		rec := &kgo.Record{Topic: "retrieval.requests", Key: []byte("req-3"), Value: bytes.Repeat([]byte{'v'}, 500_000), Headers: hdrs(5, 100)}
		dl := BuildMinimal(rec, Failure{Reason: "bad", ErrorType: ErrorTypePermanent, Attempts: 2, ConsumerGroup: "retrieval"})
		if len(dl.Value) != 0 || string(dl.Key) != "req-3" || dl.Topic != "retrieval.requests.dlq" {
			t.Fatalf("minimal dead letter: key %q, %d value bytes", dl.Key, len(dl.Value))
		}
		if got, _ := header(dl, HeaderTruncated); got != "key=5/5 headers=0/5 value=0/500000" {
			t.Errorf("%s = %q", HeaderTruncated, got)
		}
		if got, _ := header(dl, HeaderReason); got != "bad" {
			t.Errorf("reason %q", got)
		}
	})
}

func TestDeadLetter(t *testing.T) {
	ts := time.Date(2026, 11, 22, 8, 0, 0, 123, time.UTC)
	in := &kgo.Record{
		Topic: "retrieval.requests", Partition: 4, Offset: 99, Timestamp: ts,
		Key: []byte("k"), Value: []byte("v"),
		Headers: []kgo.RecordHeader{
			{Key: "traceparent", Value: []byte("00-aa-bb-01")},
			{Key: HeaderReason, Value: []byte("from an earlier trip")},
		},
	}
	out := Build(in, Failure{Reason: strings.Repeat("x", 5000), ErrorType: ErrorTypePermanent, Attempts: 2, ConsumerGroup: "retrieval"}, 1_000_000)
	if out.Topic != "retrieval.requests.dlq" || string(out.Key) != "k" || string(out.Value) != "v" {
		t.Fatalf("record %+v", out)
	}
	got := map[string][]string{}
	for _, h := range out.Headers {
		got[h.Key] = append(got[h.Key], string(h.Value))
	}
	want := map[string]string{
		"traceparent":           "00-aa-bb-01",
		HeaderErrorType:         "permanent",
		HeaderOriginalTopic:     "retrieval.requests",
		HeaderOriginalPartition: "4",
		HeaderOriginalOffset:    "99",
		HeaderOriginalTimestamp: "2026-11-22T08:00:00.000000123Z",
		HeaderAttempts:          "2",
		HeaderConsumerGroup:     "retrieval",
	}
	for k, v := range want {
		if len(got[k]) != 1 || got[k][0] != v {
			t.Errorf("header %s = %q, want [%q]", k, got[k], v)
		}
	}
	if r := got[HeaderReason]; len(r) != 1 || len(r[0]) > maxReasonBytes || r[0] == "from an earlier trip" {
		t.Errorf("reason headers %q: want one fresh, capped reason", r)
	}
	if len(in.Headers) != 2 {
		t.Error("the input record's headers were modified")
	}
}

// Security #2: every dead letter, minimal and truncated ones included, keeps
// the correlation header that hands the outcome to the waiting call.
func TestBuildKeepsTheCorrelationHeader(t *testing.T) {
	rec := &kgo.Record{Topic: "retrieval.requests", Key: []byte("id-1"), Value: bytes.Repeat([]byte("v"), 4096),
		Headers: []kgo.RecordHeader{{Key: "big", Value: bytes.Repeat([]byte("h"), 2048)}, {Key: messages.HeaderCorrelation, Value: []byte("nonce-1")}}}
	f := Failure{Reason: "bad", ErrorType: ErrorTypePermanent, Attempts: 1}
	for name, dl := range map[string]*kgo.Record{
		"full": Build(rec, f, 0), "truncated": Build(rec, f, 1024), "minimal": BuildMinimal(rec, f),
	} {
		n := 0
		for _, h := range dl.Headers {
			if h.Key == messages.HeaderCorrelation {
				n++
				if string(h.Value) != "nonce-1" {
					t.Errorf("%s: correlation %q", name, h.Value)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s letter has %d correlation headers, want 1: %v", name, n, dl.Headers)
		}
	}
}
