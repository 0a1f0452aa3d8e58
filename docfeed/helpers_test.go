// SPDX-License-Identifier: Apache-2.0

package docfeed_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

const topic = "test.documents"

// env is a broker with a documents topic and a producer placing records
// on the partition they name.
type env struct {
	t        testing.TB
	addr     string
	producer *kgo.Client
	adm      *kadm.Client
	maxBatch int // the followers' Config.MaxBatch
}

func newEnv(t testing.TB, partitions int32) *env {
	t.Helper()
	addr := brokertest.NewBroker(t, int(partitions)).Addr()
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(2<<20))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	// Small batches: the tests see several batches apply.
	e := &env{t: t, addr: addr, producer: producer, adm: kadm.NewClient(producer), maxBatch: 100}
	compact := "compact"
	if _, err := e.adm.CreateTopic(t.Context(), partitions, -1, map[string]*string{"cleanup.policy": &compact}, topic); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.CreateTopic(t.Context(), 1, -1, nil, messages.DLQTopic(topic)); err != nil {
		t.Fatal(err)
	}
	return e
}

// doc returns a document with the given id and body.
func doc(id, body string) search.Document {
	return search.Document{ID: id, Title: id, Body: body, Source: "test"}
}

// upsert publishes docs, each to partition p.
func (e *env) upsert(p int32, docs ...search.Document) {
	e.t.Helper()
	var recs []*kgo.Record
	for _, d := range docs {
		v, err := corpus.EncodeDocument(d)
		if err != nil {
			e.t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(d.ID), Value: v})
	}
	e.publish(recs...)
}

// remove publishes tombstones of ids to partition p.
func (e *env) remove(p int32, ids ...string) {
	e.t.Helper()
	var recs []*kgo.Record
	for _, id := range ids {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(id)})
	}
	e.publish(recs...)
}

func (e *env) publish(recs ...*kgo.Record) {
	e.t.Helper()
	if err := e.producer.ProduceSync(e.t.Context(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// follower is a running Follower and what it logged.
type follower struct {
	*docfeed.Follower
	logs *syncbuf.Buffer
	stop func()
}

// start starts a Follower on dir ("" a temporary one), stopped and closed
// by t.Cleanup or by stop.
func (e *env) start(name, dir string) *follower { return e.startWith(name, dir, nil) }

// startWith is start with the given tracer (nil: one with no spans).
func (e *env) startWith(name, dir string, tracer *kafkatrace.Tracer) *follower {
	e.t.Helper()
	logs := &syncbuf.Buffer{}
	if tracer == nil {
		tracer = kafkatrace.New(kafkatrace.WithTracerProvider(noop.NewTracerProvider()), kafkatrace.WithConsumerGroup(name))
	}
	f, err := docfeed.New(e.t.Context(), docfeed.Config{Topic: topic, Name: name, Dir: dir, MaxBatch: e.maxBatch}, tracer,
		[]kgo.Opt{kgo.SeedBrokers(e.addr)}, docfeed.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("%s: Run: %v", name, err)
			}
			if err := f.Close(); err != nil {
				e.t.Errorf("%s: Close: %v", name, err)
			}
		})
	}
	e.t.Cleanup(stop)
	return &follower{Follower: f, logs: logs, stop: stop}
}

// waitReady waits for f to be ready.
func (f *follower) waitReady(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := f.WaitReady(ctx); err != nil {
		t.Fatalf("not ready: %v (%v)", err, f.Ready())
	}
}

// ids returns the ids f's index finds for query, best first.
func (f *follower) ids(t *testing.T, query string) []string {
	t.Helper()
	hits, err := f.Index().Search(t.Context(), query, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

// has reports whether f's index holds id.
func (f *follower) has(id string) bool {
	_, ok := f.Index().Document(id)
	return ok
}

// topicState reads the documents topic to its end and returns the digest
// of its final state: the last value of each key, tombstones deleting.
func (e *env) topicState() search.Digest {
	e.t.Helper()
	ends, err := e.adm.ListEndOffsets(e.t.Context(), topic)
	if err != nil {
		e.t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	state := map[string]string{}
	got := map[int32]int64{}
	done := func() bool {
		for p, o := range want {
			if got[p] < o {
				return false
			}
		}
		return true
	}
	ctx, cancel := context.WithTimeout(e.t.Context(), 30*time.Second)
	defer cancel()
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			e.t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = r.Offset + 1
			if r.Value == nil {
				delete(state, string(r.Key))
				return
			}
			d, err := corpus.ParseDocument(r.Value)
			if err != nil {
				return
			}
			state[d.ID] = d.Hash()
		})
	}
	var dg search.Digest
	for id, v := range state {
		dg.Add(id, v)
	}
	return dg
}

// docs returns n documents with ids prefix-0… and a body naming word.
func docs(prefix string, n int, word string) []search.Document {
	out := make([]search.Document, n)
	for i := range out {
		out[i] = doc(fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("document %d about %s", i, word))
	}
	return out
}
