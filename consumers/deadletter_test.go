package consumers

import (
	"bytes"
	"errors"
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
			dl := deadLetter(tt.rec, Permanent(errors.New("record key and value: over the limit")), 1, "retrieval", maxBytes)
			size := recordOverhead + len(dl.Key) + len(dl.Value) + headersSize(dl.Headers)
			if size > maxBytes {
				t.Errorf("dead letter of about %d bytes, over %d", size, maxBytes)
			}
			for _, k := range []string{messages.HeaderDLQReason, messages.HeaderDLQErrorType, messages.HeaderDLQOriginalTopic,
				messages.HeaderDLQOriginalOffset, messages.HeaderDLQAttempts, messages.HeaderDLQConsumerGroup} {
				if _, ok := header(dl, k); !ok {
					t.Errorf("header %s missing", k)
				}
			}
			got, truncated := header(dl, messages.HeaderDLQTruncated)
			if tt.truncated == "" {
				if truncated || !bytes.Equal(dl.Value, tt.rec.Value) || !bytes.Equal(dl.Key, tt.rec.Key) {
					t.Fatalf("a small record's dead letter was cut: %q", got)
				}
				return
			}
			if !truncated || !strings.HasPrefix(got, tt.truncated) {
				t.Fatalf("%s = %q (present %v), want prefix %q", messages.HeaderDLQTruncated, got, truncated, tt.truncated)
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
		dl := minimalDeadLetter(rec, Permanent(errors.New("bad")), 2, "retrieval")
		if len(dl.Value) != 0 || string(dl.Key) != "req-3" || dl.Topic != "retrieval.requests.dlq" {
			t.Fatalf("minimal dead letter: key %q, %d value bytes", dl.Key, len(dl.Value))
		}
		if got, _ := header(dl, messages.HeaderDLQTruncated); got != "key=5/5 headers=0/5 value=0/500000" {
			t.Errorf("%s = %q", messages.HeaderDLQTruncated, got)
		}
		if got, _ := header(dl, messages.HeaderDLQReason); got != "bad" {
			t.Errorf("reason %q", got)
		}
	})
}
