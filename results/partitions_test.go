// SPDX-License-Identifier: Apache-2.0

package results

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/topology"
)

// checkEvery is the collectors' metadata interval in these tests.
const checkEvery = 100 * time.Millisecond

// runCollector starts a kfake cluster with one partition per topic and a
// collector over it, checking its topics every checkEvery, and returns
// them with a producer client writing to chosen partitions.
func runCollector(t *testing.T) (*Collector, *kgo.Client, messages.Topics) {
	t.Helper()
	topics := messages.DefaultTopics()
	top := topology.Default(topics)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, top.All()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	opts := []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.MetadataMaxAge(checkEvery), kgo.MetadataMinAge(checkEvery)}
	c, err := NewCollector(t.Context(), opts, kafkatrace.New(), top, WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	pub, err := kgo.NewClient(append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	return c, pub, topics
}

// produceResult writes a result for id to partition of topic.
func produceResult(t *testing.T, pub *kgo.Client, topic string, partition int32, id string) {
	t.Helper()
	v, err := messages.EncodeResult(messages.Result{RequestID: id})
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: partition, Key: []byte(id), Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestCollectorConsumesPartitionsAddedLater: outcomes written to partitions
// added after the collector started, to the results topic and to a
// dead-letter topic, even before the collector has noticed them, are
// delivered.
func TestCollectorConsumesPartitionsAddedLater(t *testing.T) {
	c, pub, topics := runCollector(t)
	dlq := messages.DLQTopic(topics.Requests)
	adm := kadm.NewClient(pub)
	resp, err := adm.CreatePartitions(t.Context(), 2, topics.Results, dlq)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	result, letter := c.Expect("on-new-results"), c.Expect("on-new-dlq")
	produceResult(t, pub, topics.Results, 2, "on-new-results")
	if err := pub.ProduceSync(t.Context(), &kgo.Record{Topic: dlq, Partition: 1, Key: []byte("on-new-dlq"), Value: []byte("{}")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan Outcome{result, letter} {
		select {
		case out := <-ch:
			if out.RequestID == "on-new-dlq" && !out.Failed {
				t.Errorf("dead letter delivered as %+v", out)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("an outcome on a partition added after start was not delivered")
		}
	}
	if err := c.Ready(); err != nil {
		t.Errorf("Ready: %v", err)
	}
}

// TestCollectorReadyReportsBehind: a collector that does not process what
// arrives (stalled here on its lock) is not ready, naming the partition;
// once it has read up to the end it is ready again.
func TestCollectorReadyReportsBehind(t *testing.T) {
	c, pub, topics := runCollector(t)
	if err := c.Ready(); err != nil {
		t.Fatalf("Ready at start: %v", err)
	}
	c.mu.Lock() // every outcome's delivery waits: the collector stalls
	stalled := true
	defer func() {
		if stalled {
			c.mu.Unlock()
		}
	}()
	for i := range 3 {
		produceResult(t, pub, topics.Results, 0, "r"+string(rune('0'+i)))
	}
	var err error
	if !poll.Wait(30*time.Second, func() bool { err = c.Ready(); return err != nil }) {
		t.Fatal("a stalled collector stays ready")
	}
	if want := topics.Results + " partition 0 read up to offset"; !strings.Contains(err.Error(), want) {
		t.Errorf("Ready error %q does not contain %q", err, want)
	}
	stalled = false
	c.mu.Unlock()
	if !poll.Wait(30*time.Second, func() bool { err = c.Ready(); return err == nil }) {
		t.Fatalf("still not ready after catching up: %v", err)
	}
}
