// SPDX-License-Identifier: Apache-2.0

package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// TestRetentionBoundsTheDevelopmentBroker: the broker deletes the records
// of a pipeline topic older than its retention (the log start moves past
// them), so that a long run does not grow without bound, while the
// compacted documents topic, created by the broker or by kretrieve,
// keeps every document, however old.
func TestRetentionBoundsTheDevelopmentBroker(t *testing.T) {
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DefaultPartitions: 1, Retention: time.Minute,
		RetentionCheckInterval: 50 * time.Millisecond, CompactedTopics: []string{"retrieval.documents"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// A second compacted topic, as kretrieve creates it on a broker
	// that did not.
	if err := kafkaclient.EnsureCompactedTopics(t.Context(), cl, kafkaclient.Config{}, "other.documents"); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	// One produce each: a batch expires by its newest record.
	for _, topic := range []string{"retrieval.requests", "retrieval.documents", "other.documents"} {
		for _, r := range []*kgo.Record{
			{Topic: topic, Key: []byte("a"), Value: []byte("an hour old"), Timestamp: old},
			{Topic: topic, Key: []byte("b"), Value: []byte("new")},
		} {
			if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	adm := kadm.NewClient(cl)
	start := func(topic string) int64 {
		s, err := adm.ListStartOffsets(t.Context(), topic)
		if err != nil {
			return -1
		}
		o, _ := s.Lookup(topic, 0)
		return o.Offset
	}
	poll.Until(t, 10*time.Second, func() bool { return start("retrieval.requests") == 1 },
		"the requests topic's hour-old record deleted (log start %d)", start("retrieval.requests"))
	for _, topic := range []string{"retrieval.documents", "other.documents"} {
		if s := start(topic); s != 0 {
			t.Errorf("%s: log start %d: a compacted topic lost an old document to retention", topic, s)
		}
	}
}

// TestCloseTwice: closing a broker twice does nothing the second time (a
// test closes it, and its cleanup again).
func TestCloseTwice(t *testing.T) {
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close()
}
