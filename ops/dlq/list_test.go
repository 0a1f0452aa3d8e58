// SPDX-License-Identifier: Apache-2.0

package dlq_test

import (
	"fmt"
	dltest "github.com/kretrieve/kretrieve/deadletters/deadletterstest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
)

// writeListFixture writes five dead letters over two topics and two
// partitions, one of them with garbage dead-letter headers, all with the
// same timestamp (List's ties are in topic, partition, offset order).
func writeListFixture(e *env) {
	e.t.Helper()
	now := time.Now().Truncate(time.Millisecond)
	recs := []*kgo.Record{
		dltest.Letter{Partition: 1, Key: "r1", Reason: "invalid request: top_k: must be between 1 and 100", ErrorType: deadletters.ErrorTypePermanent,
			OrigTopic: requests, OrigPart: 1, OrigOffset: 10, Attempts: 1, Traceparent: dltest.Traceparent(traceA, spanA)}.Record(requestsDLQ),
		dltest.Letter{Partition: 1, Key: "r2", Reason: "search: index closed", ErrorType: deadletters.ErrorTypeTransient,
			OrigTopic: requests, OrigPart: 1, OrigOffset: 11, Attempts: 3}.Record(requestsDLQ),
		dltest.Letter{Partition: 0, Key: "r3", Reason: "decode request: unexpected end of JSON input", ErrorType: deadletters.ErrorTypePermanent,
			OrigTopic: requests, OrigPart: 0, OrigOffset: 5, Attempts: 1}.Record(requestsDLQ),
		&kgo.Record{Topic: requestsDLQ, Partition: 0, Key: []byte{0xff, 0x00}, Value: []byte("not json"), Headers: []kgo.RecordHeader{
			{Key: deadletters.HeaderOriginalPartition, Value: []byte("zero")},
			{Key: deadletters.HeaderOriginalOffset, Value: []byte("-")},
			{Key: deadletters.HeaderOriginalTimestamp, Value: []byte("yesterday")},
			{Key: deadletters.HeaderAttempts, Value: []byte("∞")},
			{Key: "traceparent", Value: []byte("garbage")},
		}},
		dltest.Letter{Partition: 0, Key: "c1", Reason: "load documents: store unavailable", ErrorType: deadletters.ErrorTypeTransient,
			OrigTopic: candidates, OrigPart: 2, OrigOffset: 99, Attempts: 3}.Record(candidatesDLQ),
	}
	for _, r := range recs {
		r.Timestamp = now
	}
	e.produce(recs...)
}

// TestListSortsOldestFirst: List returns the letters by their timestamps,
// whatever their topics, partitions and offsets, and a limit keeps the
// oldest.
func TestListSortsOldestFirst(t *testing.T) {
	e := newEnv(t, 2)
	t0 := time.Now().Truncate(time.Millisecond).Add(-time.Hour)
	letter := func(topic string, partition int32, key string, age time.Duration) *kgo.Record {
		r := dltest.Letter{Partition: partition, Key: key, Reason: "x", ErrorType: deadletters.ErrorTypePermanent,
			OrigTopic: requests, Attempts: 1}.Record(topic)
		r.Timestamp = t0.Add(age)
		return r
	}
	e.produce(
		letter(requestsDLQ, 1, "p1-first", 0),
		letter(requestsDLQ, 1, "p1-second", 2*time.Second),
		letter(requestsDLQ, 0, "p0-first", 3*time.Second),
		letter(requestsDLQ, 0, "p0-second", 3*time.Second),
		letter(candidatesDLQ, 1, "c-oldest", -time.Second),
		letter(candidatesDLQ, 0, "c-middle", time.Second),
	)
	want := []string{"c-oldest", "p1-first", "c-middle", "p1-second", "p0-first", "p0-second"}
	for _, limit := range []int{0, 2, 5} {
		letters, err := dlq.List(t.Context(), e.opts, []string{requestsDLQ, candidatesDLQ}, limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range letters {
			got = append(got, string(l.Key))
		}
		w := want
		if limit > 0 {
			w = want[:limit]
		}
		if strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("limit %d: letters %q, want oldest first %q", limit, got, w)
		}
	}
}

func TestListReturnsLettersInOrder(t *testing.T) {
	e := newEnv(t, 2)
	writeListFixture(e)
	topics := []string{requestsDLQ, candidatesDLQ, messages.DLQTopic(messages.DefaultResultsTopic)}

	letters, err := dlq.List(t.Context(), e.opts, topics, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range letters {
		got = append(got, fmt.Sprintf("%s/%d@%d %s", l.Topic, l.Partition, l.Offset, l.Key))
	}
	want := []string{
		candidatesDLQ + "/0@0 c1",
		requestsDLQ + "/0@0 r3",
		requestsDLQ + "/0@1 \xff\x00",
		requestsDLQ + "/1@0 r1",
		requestsDLQ + "/1@1 r2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("letters:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	r1 := letters[3]
	if r1.Reason != "invalid request: top_k: must be between 1 and 100" || r1.ErrorType != "permanent" || r1.OriginalTopic != requests ||
		r1.OriginalPartition != 1 || r1.OriginalOffset != 10 || !r1.OriginalTimestamp.Equal(dltest.OrigTime) || r1.Attempts != 1 ||
		r1.ConsumerGroup != "retrieval" || r1.TraceID != traceA || time.Since(r1.Timestamp) > time.Minute {
		t.Fatalf("r1 = %+v", r1)
	}
	garbage := letters[2]
	if garbage.OriginalTopic != "" || garbage.OriginalPartition != 0 || garbage.OriginalOffset != 0 || !garbage.OriginalTimestamp.IsZero() ||
		garbage.Attempts != 0 || garbage.TraceID != "" || string(garbage.Value) != "not json" {
		t.Fatalf("garbage letter = %+v", garbage)
	}

	for _, limit := range []int{1, 2, 4, 5, 6} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			letters, err := dlq.List(t.Context(), e.opts, topics, limit)
			if err != nil {
				t.Fatal(err)
			}
			n := min(limit, len(want))
			if len(letters) != n {
				t.Fatalf("%d letters, want %d", len(letters), n)
			}
			for i, l := range letters {
				if g := fmt.Sprintf("%s/%d@%d %s", l.Topic, l.Partition, l.Offset, l.Key); g != want[i] {
					t.Fatalf("letter %d = %s, want %s", i, g, want[i])
				}
			}
		})
	}
}

// TestListEmptyTopicReturnsAtOnce: an empty dead-letter topic has nothing to
// wait for.
func TestListEmptyTopicReturnsAtOnce(t *testing.T) {
	e := newEnv(t, 3)
	start := time.Now()
	letters, err := dlq.List(t.Context(), e.opts, []string{requestsDLQ}, 0)
	if err != nil || len(letters) != 0 {
		t.Fatalf("List = %v, %v", letters, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("List of an empty topic took %v", d)
	}
}

func TestListErrors(t *testing.T) {
	e := newEnv(t, 1)
	if _, err := dlq.List(t.Context(), e.opts, []string{"no.such.topic.dlq"}, 0); err == nil || !strings.Contains(err.Error(), "no.such.topic.dlq does not exist") {
		t.Fatalf("missing topic: %v", err)
	}
	if _, err := dlq.List(t.Context(), e.opts, nil, 0); err == nil {
		t.Fatal("no topics accepted")
	}
	if _, err := dlq.List(t.Context(), e.opts, []string{requestsDLQ}, -1); err == nil {
		t.Fatal("negative limit accepted")
	}
}
