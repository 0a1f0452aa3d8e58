// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/tracecontext"
)

func newTestTracer(t *testing.T, opts ...Option) (*Tracer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts = append([]Option{WithTracerProvider(tp), WithPropagator(testPropagator())}, opts...)
	return New(opts...), rec
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

func wantAttrs(t *testing.T, span sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	got := attrMap(span.Attributes())
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: attribute %s = %v (%T), want %v (%T)", span.Name(), k, got[k], got[k], v, v)
		}
	}
}

func TestSendSpan(t *testing.T) {
	tr, rec := newTestTracer(t, WithClientID("c1"), WithServerAddress("127.0.0.1:9092"))
	parentCtx, parent := sdktrace.NewTracerProvider().Tracer("t").Start(context.Background(), "root")
	defer parent.End()

	r := &kgo.Record{Topic: "retrieval.requests", Key: []byte("req-1"), Value: []byte(`{"query":"x"}`), Context: parentCtx}
	tr.OnProduceRecordBuffered(r)
	sc := trace.SpanContextFromContext(r.Context)
	if got := (tracecontext.HeaderCarrier{Record: r}).Get("traceparent"); got != "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01" {
		t.Fatalf("traceparent header %q does not carry the send span %v", got, sc)
	}
	r.Partition, r.Offset = 3, 42
	tr.OnProduceRecordUnbuffered(r, nil)

	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("ended spans = %d, want 1", len(spans))
	}
	s := spans[0]
	if s.Name() != "send retrieval.requests" || s.SpanKind() != trace.SpanKindProducer {
		t.Fatalf("span %q kind %v", s.Name(), s.SpanKind())
	}
	if s.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("send span parent %v, want %v", s.Parent().SpanID(), parent.SpanContext().SpanID())
	}
	wantAttrs(t, s, map[string]any{
		"messaging.system":                   "kafka",
		"messaging.operation.type":           "send",
		"messaging.operation.name":           "send",
		"messaging.destination.name":         "retrieval.requests",
		"messaging.destination.partition.id": "3",
		"messaging.kafka.offset":             int64(42),
		"messaging.client.id":                "c1",
		"messaging.message.body.size":        int64(13),
		"server.address":                     "127.0.0.1",
		"server.port":                        int64(9092),
	})
	got := attrMap(s.Attributes())
	if _, raw := got["messaging.kafka.message.key"]; raw {
		t.Fatal("raw record key recorded")
	}
	if got[string(otelnames.MessageKeyHash)] == "" || got[string(otelnames.MessageKeyHash)] == nil {
		t.Fatal("key hash missing")
	}
}

func TestSendSpanError(t *testing.T) {
	tr, rec := newTestTracer(t)
	r := &kgo.Record{Topic: "t"}
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, kerr.UnknownTopicOrPartition)
	s := rec.Ended()[0]
	if s.Status().Code != codes.Error {
		t.Fatalf("status %v", s.Status())
	}
	wantAttrs(t, s, map[string]any{"error.type": "UNKNOWN_TOPIC_OR_PARTITION"})
	if _, ok := attrMap(s.Attributes())["messaging.kafka.offset"]; ok {
		t.Fatal("offset set on a failed send")
	}
}

func TestStartProcess(t *testing.T) {
	tr, rec := newTestTracer(t, WithConsumerGroup("retrieval"))
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xaa}, SpanID: trace.SpanID{0xbb}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	r := &kgo.Record{
		Topic: "retrieval.requests", Partition: 2, Offset: 7, Key: []byte("k"), Value: []byte("{}"),
		Timestamp: time.Now().Add(-300 * time.Millisecond),
		Headers:   []kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-aa000000000000000000000000000000-bb00000000000000-01")}},
	}
	runCtx, cancel := context.WithCancel(context.Background())
	ctx, span, qw := tr.StartProcess(runCtx, r, 10)
	if qw.Wait < 300*time.Millisecond {
		t.Fatalf("queue wait %v, want ≥ 300ms", qw.Wait)
	}
	cancel()
	if ctx.Err() == nil {
		t.Fatal("process context is not derived from the run context")
	}
	EndProcess(span, nil, "")

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("ended spans = %d, want 2", len(spans))
	}
	wait, process := spans[0], spans[1]
	if wait.Name() != "wait retrieval.requests" || process.Name() != "process retrieval.requests" {
		t.Fatalf("names %q, %q", wait.Name(), process.Name())
	}
	for _, s := range spans {
		if s.Parent().SpanID() != remote.SpanID() || s.SpanContext().TraceID() != remote.TraceID() {
			t.Fatalf("%s: parent %v, want the producer's span %v", s.Name(), s.Parent(), remote)
		}
	}
	if process.SpanKind() != trace.SpanKindConsumer || wait.SpanKind() != trace.SpanKindInternal {
		t.Fatalf("kinds: process %v, wait %v", process.SpanKind(), wait.SpanKind())
	}
	if len(process.Links()) != 1 || process.Links()[0].SpanContext.SpanID() != remote.SpanID() {
		t.Fatalf("process links %v, want the producer's span", process.Links())
	}
	if !wait.EndTime().Equal(process.StartTime()) {
		t.Fatalf("wait ends %v, process starts %v", wait.EndTime(), process.StartTime())
	}
	if d := wait.EndTime().Sub(wait.StartTime()); d < 300*time.Millisecond {
		t.Fatalf("wait span lasts %v", d)
	}
	common := map[string]any{
		"messaging.system":                   "kafka",
		"messaging.destination.name":         "retrieval.requests",
		"messaging.destination.partition.id": "2",
		"messaging.kafka.offset":             int64(7),
		"messaging.consumer.group.name":      "retrieval",
	}
	wantAttrs(t, process, common)
	wantAttrs(t, process, map[string]any{"messaging.operation.type": "process", "messaging.operation.name": "process"})
	wantAttrs(t, wait, common)
	wantAttrs(t, wait, map[string]any{
		string(otelnames.QueueWaitTimestampType): CreateTime,
		string(otelnames.QueueWaitOffsetLag):     int64(2),
	})
	if _, ok := attrMap(wait.Attributes())["messaging.operation.type"]; ok {
		t.Fatal("wait span claims a messaging operation type")
	}
}

func TestStartProcessClockSkewAndNewRoot(t *testing.T) {
	tr, rec := newTestTracer(t)
	r := &kgo.Record{
		Topic: "t", Timestamp: time.Now().Add(5 * time.Second),
		Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-00000000000000000000000000000000-b7ad6b7169203331-01")}},
	}
	_, span, qw := tr.StartProcess(context.Background(), r, -1)
	EndProcess(span, errors.New("boom"), "test")
	if qw.Wait != 0 || qw.Skew < 4*time.Second {
		t.Fatalf("wait %v skew %v", qw.Wait, qw.Skew)
	}
	wait, process := rec.Ended()[0], rec.Ended()[1]
	if wait.EndTime().Before(wait.StartTime()) {
		t.Fatal("negative wait span")
	}
	wantAttrs(t, wait, map[string]any{string(otelnames.QueueWaitClockSkew): true})
	if ms, _ := attrMap(wait.Attributes())[string(otelnames.QueueWaitClockSkewMS)].(float64); ms < 4000 {
		t.Fatalf("skew ms %v", ms)
	}
	if _, ok := attrMap(wait.Attributes())[string(otelnames.QueueWaitOffsetLag)]; ok {
		t.Fatal("offset lag set without a high watermark")
	}
	if wait.Parent().SpanID() != process.SpanContext().SpanID() || wait.SpanContext().TraceID() != process.SpanContext().TraceID() {
		t.Fatal("in a new trace the wait span must be the process span's child")
	}
	if process.Parent().IsValid() || len(process.Links()) != 0 {
		t.Fatalf("malformed traceparent was used: parent %v links %v", process.Parent(), process.Links())
	}
	wantAttrs(t, process, map[string]any{string(otelnames.TraceContextInvalid): true, "error.type": "test"})
	if process.Status().Code != codes.Error {
		t.Fatal("error not recorded")
	}
}

// TestStartProcessLogAppendTime: with a broker-set timestamp the wait span is
// measured from the broker's clock and says so. (kfake ignores the topic's
// message.timestamp.type, so this is checked here rather than end to end.)
func TestStartProcessLogAppendTime(t *testing.T) {
	tr, rec := newTestTracer(t)
	r := &kgo.Record{
		Topic: "t", Timestamp: time.Now().Add(-2 * time.Second),
		Attrs: kgo.NewRecordAttrs(kgo.RecordAttrsOpts{TimestampType: 1}),
	}
	_, span, qw := tr.StartProcess(context.Background(), r, -1)
	EndProcess(span, nil, "")
	if qw.TimestampType != LogAppendTime || qw.Wait < 2*time.Second {
		t.Fatalf("queue wait %+v", qw)
	}
	wantAttrs(t, rec.Ended()[0], map[string]any{string(otelnames.QueueWaitTimestampType): LogAppendTime})
}
