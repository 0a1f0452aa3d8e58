// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
)

// TestBrokerRestartLosesNothing stops the embedded broker (with a data
// directory) in the middle of a run and starts it again on the same port:
// workers and clients reconnect and every request completes.
func TestBrokerRestartLosesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := broker.Config{Listen: addr, DataDir: t.TempDir(), DefaultPartitions: 3}
	b, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var current atomic.Pointer[broker.Broker]
	current.Store(b)
	t.Cleanup(func() { current.Load().Close() })

	h := newHarnessOn(t, addr, 3)
	h.startWorkers()
	c := h.client(true)
	const n = 2000
	l := startLoad(t, c, n, 2*time.Minute)
	waitProgress(t, l, n/4)
	current.Load().Close()
	// The broker stays down until a client has found it gone: hold its
	// port, and drop the first reconnection attempt.
	down, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("hold %s while the broker is down: %v", addr, err)
	}
	t.Cleanup(func() { _ = down.Close() })
	refused := make(chan struct{})
	go func() {
		if conn, err := down.Accept(); err == nil {
			_ = conn.Close()
			close(refused)
		}
	}()
	select {
	case <-refused:
	case <-time.After(time.Minute):
		t.Fatal("no client tried to reconnect to the stopped broker")
	}
	_ = down.Close()
	b2, err := broker.Start(cfg)
	if err != nil {
		t.Fatalf("restart on %s: %v", addr, err)
	}
	current.Store(b2)
	if completed, _ := l.check(t); completed != n {
		t.Fatalf("%d of %d requests completed across the broker restart", completed, n)
	}
	t.Logf("duplicates after the restart: %d", c.Collector.Duplicates())
}

// TestCommitFaultsAndPoisonRecords fails 20% of offset commits for a while
// and mixes 1% undecodable payloads into the load: every good request
// completes, every poison record is dead-lettered with its headers, and
// consumption goes on by itself once commits work again.
func TestCommitFaultsAndPoisonRecords(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	h := newHarnessOn(t, b.Addr(), 3)
	var faulting atomic.Bool
	var commits, failed atomic.Int64
	faulting.Store(true)
	b.Cluster().ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		if !faulting.Load() || commits.Add(1)%5 != 0 {
			return nil, nil, false
		}
		failed.Add(1)
		return refusedCommit(req.(*kmsg.OffsetCommitRequest)), nil, true
	})
	h.startWorkers()
	c := h.client(true)
	raw := rawProducer(t, h)

	const n, poisonEvery = 3000, 100
	l := startLoad(t, c, n, 2*time.Minute)
	var poison []string
	for i := 0; i < n/poisonEvery; i++ {
		id := "poison-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		poison = append(poison, id)
		ch := c.Collector.Expect(id)
		go func() { <-ch }()
		if err := raw.ProduceSync(t.Context(), &kgo.Record{Topic: h.cfg.Topology().Requests(), Key: []byte(id), Value: []byte(`{"query": 42}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitProgress(t, l, n/2)
	faulting.Store(false)
	if completed, _ := l.check(t); completed != n {
		t.Fatalf("%d of %d requests completed", completed, n)
	}
	if failed.Load() == 0 {
		t.Fatal("no commit was failed: the fault was not exercised")
	}
	t.Logf("commits failed: %d of %d while faulting; duplicates: %d", failed.Load(), commits.Load(), c.Collector.Duplicates())

	// Every poison record is in the dead-letter topic with its headers.
	cl, err := kgo.NewClient(append(kafkaclient.Options(h.cfg.Kafka, h.logger, nil), kgo.ConsumeTopics(messages.DLQTopic(h.cfg.Topology().Requests())),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]*kgo.Record{}
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < len(poison) && time.Now().Before(deadline) {
		cl.PollRecords(t.Context(), 1000).EachRecord(func(r *kgo.Record) { seen[string(r.Key)] = r })
	}
	for _, id := range poison {
		r := seen[id]
		if r == nil {
			t.Fatalf("poison record %s not dead-lettered (%d of %d found)", id, len(seen), len(poison))
		}
		if hdrValue(r, deadletters.HeaderErrorType) != "permanent" || !strings.Contains(hdrValue(r, deadletters.HeaderReason), "query") ||
			hdrValue(r, deadletters.HeaderConsumerGroup) != "retrieval" || hdrValue(r, deadletters.HeaderOriginalOffset) == "" {
			t.Fatalf("dead letter %s headers %v", id, r.Headers)
		}
	}
}

func waitProgress(t *testing.T, l *load, target int64) {
	t.Helper()
	if !poll.Wait(3*time.Minute, func() bool { return l.progress.Load() >= target }) {
		t.Fatalf("stuck at %d outcomes, waiting for %d", l.progress.Load(), target)
	}
}

// refusedCommit is the broker's answer refusing every partition of r with
// UNKNOWN_SERVER_ERROR, for kfake control functions that fail commits.
func refusedCommit(r *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, rt := range r.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, p := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = p.Partition
			sp.ErrorCode = kerr.UnknownServerError.Code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
