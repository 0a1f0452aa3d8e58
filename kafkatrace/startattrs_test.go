// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// startSpy is a parent-based AlwaysSample sampler that keeps the attribute
// keys each span was started with, by span name.
type startSpy struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (s *startSpy) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	keys := make([]string, 0, len(p.Attributes))
	for _, kv := range p.Attributes {
		keys = append(keys, string(kv.Key))
	}
	s.mu.Lock()
	s.seen[p.Name] = keys
	s.mu.Unlock()
	return sdktrace.ParentBased(sdktrace.AlwaysSample()).ShouldSample(p)
}

func (s *startSpy) Description() string { return "startSpy" }

func (s *startSpy) keys(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[name]
}

// attrKeys returns the keys of kvs, failing on a key set twice.
func attrKeys(t *testing.T, name string, kvs []attribute.KeyValue) map[string]bool {
	t.Helper()
	keys := make(map[string]bool, len(kvs))
	for _, kv := range kvs {
		if keys[string(kv.Key)] {
			t.Errorf("%s: attribute %s set twice", name, kv.Key)
		}
		keys[string(kv.Key)] = true
	}
	return keys
}

// TestSpansStartWithSamplingAttributes checks what a sampler sees when each
// Kafka span starts (the documented sampling attributes, in this order) and
// that every span still ends with all its attributes, each once: a root send
// span (new trace under a parent-based sampler, started bare), its failed
// twin, and the wait and process spans of the record it produced.
func TestSpansStartWithSamplingAttributes(t *testing.T) {
	spy := &startSpy{seen: map[string][]string{}}
	tr, rec := newSampledTracer(t, spy, WithParentBasedSampling(), WithClientID("c1"),
		WithServerAddress("127.0.0.1:9092"), WithConsumerGroup("g"))

	r := &kgo.Record{Topic: "a", Key: []byte("k"), Value: []byte("v"), Timestamp: time.Now()}
	tr.OnProduceRecordBuffered(r)
	if got := spy.keys("send a"); len(got) != 0 {
		t.Errorf("root send span started with %q, want nothing (a new trace)", got)
	}
	r.Partition, r.Offset = 2, 7
	tr.OnProduceRecordUnbuffered(r, nil)

	failed := &kgo.Record{Topic: "b", Key: []byte("k"), Value: []byte("v")}
	tr.OnProduceRecordBuffered(failed)
	tr.OnProduceRecordUnbuffered(failed, kerr.UnknownTopicOrPartition)

	in := &kgo.Record{Topic: "a", Partition: 2, Offset: 7, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: r.Headers}
	ctx, span, qw := tr.StartProcess(context.Background(), in, 10)
	// Under the sampled process span, a produced record's send span
	// starts with the sampling attributes.
	out := &kgo.Record{Topic: "c", Value: []byte("v"), Context: ctx}
	tr.OnProduceRecordBuffered(out)
	tr.OnProduceRecordUnbuffered(out, nil)
	tr.EndProcess(ctx, in, qw.End, span, nil, "")

	// The messaging conventions' sampling-relevant attributes
	// (model/messaging/spans.yaml), the partition where it is known.
	wantStart := map[string][]string{
		"send c":    {"messaging.system", "messaging.operation.name", "messaging.operation.type", "messaging.destination.name", "server.address", "server.port"},
		"process a": {"messaging.system", "messaging.operation.name", "messaging.operation.type", "messaging.destination.name", "messaging.destination.partition.id", "server.address", "server.port"},
		"wait a":    {"messaging.system", "messaging.destination.name"},
	}
	for name, want := range wantStart {
		if got := spy.keys(name); !slices.Equal(got, want) {
			t.Errorf("%s started with %q, want %q", name, got, want)
		}
	}

	consumed := []string{"messaging.client.id", "server.address", "server.port", "messaging.destination.partition.id",
		"messaging.consumer.group.name", "messaging.kafka.offset", "messaging.message.body.size", "kretrieve.message.key_hash"}
	sent := []string{"messaging.operation.name", "messaging.client.id", "server.address", "server.port", "messaging.message.body.size"}
	wantEnd := map[string][]string{
		"send a":    append([]string{"messaging.system", "messaging.operation.type", "messaging.destination.name", "kretrieve.message.key_hash", "messaging.destination.partition.id", "messaging.kafka.offset"}, sent...),
		"send b":    append([]string{"messaging.system", "messaging.operation.type", "messaging.destination.name", "kretrieve.message.key_hash", "error.type"}, sent...),
		"send c":    append([]string{"messaging.system", "messaging.operation.type", "messaging.destination.name", "messaging.destination.partition.id", "messaging.kafka.offset"}, sent...),
		"process a": append([]string{"messaging.system", "messaging.operation.type", "messaging.destination.name", "messaging.operation.name"}, consumed...),
		"wait a": append([]string{"messaging.system", "messaging.destination.name", "kretrieve.queue_wait.timestamp_type",
			"kretrieve.queue_wait.ms", "kretrieve.queue_wait.offset_lag"}, consumed...),
	}
	ended := rec.Ended()
	if len(ended) != len(wantEnd) {
		t.Fatalf("ended %d spans, want %d", len(ended), len(wantEnd))
	}
	for _, s := range ended {
		want, ok := wantEnd[s.Name()]
		if !ok {
			t.Errorf("unexpected span %q", s.Name())
			continue
		}
		got := attrKeys(t, s.Name(), s.Attributes())
		for _, k := range want {
			if !got[k] {
				t.Errorf("%s: attribute %s missing", s.Name(), k)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d attributes %v, want %d", s.Name(), len(got), got, len(want))
		}
		if s.Name() == "send b" && s.SpanKind() != trace.SpanKindProducer {
			t.Errorf("send b kind %v", s.SpanKind())
		}
	}
}
