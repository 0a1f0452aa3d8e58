// SPDX-License-Identifier: Apache-2.0

package dlq_test

import (
	"context"
	"errors"
	"github.com/kretrieve/kretrieve/tracecontext"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
)

// Topics of the tests.
const (
	requests      = messages.DefaultRequestsTopic
	requestsDLQ   = requests + messages.DLQSuffix
	candidates    = messages.DefaultCandidatesTopic
	candidatesDLQ = candidates + messages.DLQSuffix
)

// env is a broker with the pipeline topics, a producer that picks partitions
// by Record.Partition, and in-memory spans.
type env struct {
	t      *testing.T
	addr   string    // the broker's address
	opts   []kgo.Opt // connection options, as kafkaclient.Options builds them
	client *kgo.Client
	adm    *kadm.Client
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	logger *slog.Logger
}

func newEnv(t *testing.T, partitions int32) *env {
	t.Helper()
	b := brokertest.NewBroker(t, int(partitions))
	kc := kafkaclient.Config{Brokers: []string{b.Addr()}, ClientID: "test", Partitions: partitions}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := kafkaclient.Options(kc, logger, nil)
	client, err := kgo.NewClient(append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	if err := kafkaclient.EnsureTopics(t.Context(), client, kc, messages.DefaultTopics().All()...); err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &env{t: t, addr: b.Addr(), opts: opts, client: client, adm: kadm.NewClient(client), spans: spans, tp: tp, logger: logger}
}

// with returns e reporting to t, for subtests.
func (e *env) with(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

func testPropagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// tracer returns a kafkatrace.Tracer recording into e.spans.
func (e *env) tracer() *kafkatrace.Tracer {
	return kafkatrace.New(kafkatrace.WithTracerProvider(e.tp), kafkatrace.WithPropagator(testPropagator()), kafkatrace.WithClientID("test"))
}

// produce produces records synchronously and returns them with their offsets.
func (e *env) produce(recs ...*kgo.Record) []*kgo.Record {
	e.t.Helper()
	if err := e.client.ProduceSync(e.t.Context(), recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	return recs
}

// readAll returns every record of topic, by partition in offset order.
func (e *env) readAll(topic string) []*kgo.Record {
	e.t.Helper()
	ends, err := e.adm.ListEndOffsets(e.t.Context(), topic)
	if err != nil || ends.Error() != nil {
		e.t.Fatalf("end offsets: %v %v", err, ends.Error())
	}
	want := 0
	ends.Each(func(o kadm.ListedOffset) { want += int(o.Offset) })
	if want == 0 {
		return nil
	}
	c, err := kgo.NewClient(append(e.opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(e.t.Context(), 10*time.Second)
	defer cancel()
	byPartition := map[int32][]*kgo.Record{}
	for got := 0; got < want; {
		fetches := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			e.t.Fatalf("read %s: %d of %d records: %v", topic, got, want, err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			byPartition[r.Partition] = append(byPartition[r.Partition], r)
			got++
		})
	}
	var out []*kgo.Record
	for p := int32(0); len(out) < want; p++ {
		out = append(out, byPartition[p]...)
	}
	return out
}

// committed returns the group's committed offsets of topic by partition.
func (e *env) committed(group, topic string) map[int32]int64 {
	e.t.Helper()
	resps, err := e.adm.FetchOffsets(e.t.Context(), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]int64{}
	}
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int32]int64{}
	resps.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out
}

// The trace and span of the dead letters' original records.
const (
	traceA = "0af7651916cd43dd8448eb211c80319c"
	spanA  = "b7ad6b7169203331"
)

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// headerValues returns the values of r's headers named key, in order.
func headerValues(r *kgo.Record, key string) []string {
	return tracecontext.HeaderCarrier{Record: r}.GetAll(key)
}
