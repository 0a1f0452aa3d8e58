// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// newRecordingTracer returns a kafkatrace.Tracer whose spans rec records.
func newRecordingTracer(t *testing.T) (*kafkatrace.Tracer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithPropagator(propagation.TraceContext{})), rec
}

// producerSpan is the span context in the test record's traceparent header.
var producerSpan = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID: trace.TraceID{0xaa}, SpanID: trace.SpanID{0xbb}, TraceFlags: trace.FlagsSampled, Remote: true,
})

func failingRecord() *kgo.Record {
	return &kgo.Record{
		Topic: "retrieval.requests", Partition: 4, Offset: 99, Timestamp: time.Now().Add(-time.Second),
		Key: []byte("req-1"), Value: []byte(`{"query":"x"}`),
		Headers: []kgo.RecordHeader{
			{Key: "traceparent", Value: []byte("00-aa000000000000000000000000000000-bb00000000000000-01")},
			{Key: "app", Value: []byte("kept")},
		},
	}
}

func spanNamed(t *testing.T, rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range rec.Ended() {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span %q", name)
	return nil
}

// A handler chain of Trace and DeadLetter: the handler runs in the process
// span, a child of the record's producer span; the failed record's dead
// letter carries the original and the kretrieve.dlq.* headers, and its send
// span is a child of the process span linked to the producer's span.
func TestTraceAndDeadLetter(t *testing.T) {
	tr, spans := newRecordingTracer(t)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()

	var handlerSpan trace.SpanContext
	var got struct {
		err          error
		dl, fallback *kgo.Record
	}
	failure := consumers.Permanent(errors.New("decode request: unexpected end of JSON input"))
	h := consumers.Chain(func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		handlerSpan = trace.SpanContextFromContext(ctx)
		if !msg.Remote.Equal(producerSpan) {
			t.Errorf("handler: msg.Remote = %v, want the producer's span %v", msg.Remote, producerSpan)
		}
		if msg.QueueWait.Wait < time.Second {
			t.Errorf("handler: queue wait %v, want ≥ 1s", msg.QueueWait.Wait)
		}
		return nil, failure
	}, consumers.Trace(tr, nil), consumers.DeadLetter(consumers.DeadLetterConfig{Group: "retrieval"}))

	in := failingRecord()
	msg := &consumers.Message{Record: in, HighWatermark: 120, Attempt: 1}
	outs, err := h(runCtx, msg)
	if !errors.Is(err, failure) || outs != nil {
		t.Fatalf("chain returned %v, %v; want no outputs and the handler's error", outs, err)
	}
	// The chain's outcome is the dead letter, carrying the error that
	// caused it, for the runtime to publish.
	var dle *consumers.DeadLetterError
	if !errors.As(err, &dle) || dle.Record == nil || dle.Fallback == nil || dle.Attempts != msg.Attempt {
		t.Fatalf("outcome %v: not a dead letter of the record", err)
	}
	got.err, got.dl, got.fallback = dle.Err, dle.Record, dle.Fallback
	if !errors.Is(got.err, failure) || err.Error() != failure.Error() {
		t.Fatalf("dead letter carries %v, want the handler's error", got.err)
	}

	// The process span: a child of the producer's span, failed permanently.
	process := spanNamed(t, spans, "process retrieval.requests")
	if process.Parent().SpanID() != producerSpan.SpanID() || process.SpanContext().TraceID() != producerSpan.TraceID() {
		t.Errorf("process span's parent %v, want the producer's span %v", process.Parent(), producerSpan)
	}
	if handlerSpan.SpanID() != process.SpanContext().SpanID() {
		t.Errorf("the handler ran under span %v, not the process span %v", handlerSpan.SpanID(), process.SpanContext().SpanID())
	}
	if process.Status().Code != codes.Error || attrMap(process.Attributes())["error.type"] != deadletters.ErrorTypePermanent {
		t.Errorf("process span status %v, attributes %v", process.Status(), process.Attributes())
	}
	spanNamed(t, spans, "wait retrieval.requests")

	// The dead letter: the original record plus what went wrong, where.
	dl := got.dl
	if dl.Topic != "retrieval.requests.dlq" || string(dl.Key) != "req-1" || string(dl.Value) != `{"query":"x"}` {
		t.Fatalf("dead letter topic %q key %q value %q", dl.Topic, dl.Key, dl.Value)
	}
	checkDeadLetterHeaders(t, in, failure, dl, got.fallback)

	// The dead letter's context outlives the run: its send span is a child
	// of the process span, linked to the producer's span.
	stop()
	if dl.Context.Err() != nil || got.fallback.Context != dl.Context {
		t.Fatal("the dead letter's context is cancelled with the run, or the fallback's differs")
	}
	tr.OnProduceRecordBuffered(dl)
	tr.OnProduceRecordUnbuffered(dl, nil)
	send := spanNamed(t, spans, "send retrieval.requests.dlq")
	if send.Parent().SpanID() != process.SpanContext().SpanID() {
		t.Errorf("send span's parent %v, want the process span %v", send.Parent().SpanID(), process.SpanContext().SpanID())
	}
	if links := send.Links(); len(links) != 1 || !links[0].SpanContext.Equal(producerSpan) {
		t.Errorf("send span links %v, want one to the producer's span", links)
	}
}

// checkDeadLetterHeaders checks that dl, the dead letter of in (the
// failingRecord, failed with failure), carries the original's headers and
// the kretrieve.dlq.* ones, and that fallback is its minimal copy.
func checkDeadLetterHeaders(t *testing.T, in *kgo.Record, failure error, dl, fallback *kgo.Record) {
	t.Helper()
	l := deadletters.FromRecord(dl)
	if l.Reason != failure.Error() || l.ErrorType != deadletters.ErrorTypePermanent || l.OriginalTopic != "retrieval.requests" ||
		l.OriginalPartition != 4 || l.OriginalOffset != 99 || l.Attempts != 1 || l.ConsumerGroup != "retrieval" ||
		l.TraceID != producerSpan.TraceID().String() || l.Truncated != "" || !l.OriginalTimestamp.Equal(in.Timestamp.UTC()) {
		t.Errorf("dead letter parsed as %+v", l)
	}
	if v, ok := dlHeader(dl, "app"); !ok || v != "kept" {
		t.Errorf("original header app = %q (present %v)", v, ok)
	}
	if v, ok := dlHeader(fallback, deadletters.HeaderTruncated); !ok || v != "key=5/5 headers=0/2 value=0/13" || fallback.Topic != dl.Topic {
		t.Errorf("fallback: topic %q, %s = %q", fallback.Topic, deadletters.HeaderTruncated, v)
	}
}

// DeadLetter's filter decides: an error it refuses is returned as it is,
// with no dead letter, and Trace records the error type it is given.
func TestDeadLetterFilter(t *testing.T) {
	tr, spans := newRecordingTracer(t)
	notNow := errors.New("search: index closed")
	h := consumers.Chain(func(context.Context, *consumers.Message) ([]*kgo.Record, error) { return nil, notNow },
		consumers.Trace(tr, func(_ *consumers.Message, err error) string {
			if dle := (*consumers.DeadLetterError)(nil); errors.As(err, &dle) {
				return "dead-lettered"
			}
			return "kept"
		}),
		consumers.DeadLetter(consumers.DeadLetterConfig{Group: "retrieval", Filter: func(_ context.Context, err error) bool { return !errors.Is(err, notNow) }}))
	msg := &consumers.Message{Record: failingRecord(), HighWatermark: -1, Attempt: 1}
	_, err := h(context.Background(), msg)
	if err != notNow {
		t.Fatalf("err %v, want the handler's", err)
	}
	if dle := (*consumers.DeadLetterError)(nil); errors.As(err, &dle) {
		t.Fatalf("dead letter %v: the filter refused it", dle)
	}
	if got := attrMap(spanNamed(t, spans, "process retrieval.requests").Attributes())["error.type"]; got != "kept" {
		t.Errorf("error.type %v, want the one errorType gave", got)
	}

	// Without an error the outputs pass through untouched.
	out := &kgo.Record{Topic: "candidates"}
	h = consumers.Chain(func(context.Context, *consumers.Message) ([]*kgo.Record, error) { return []*kgo.Record{out}, nil },
		consumers.Trace(tr, nil), consumers.DeadLetter(consumers.DeadLetterConfig{Group: "retrieval"}))
	outs, err := h(context.Background(), &consumers.Message{Record: failingRecord(), HighWatermark: -1, Attempt: 1})
	if err != nil || len(outs) != 1 || outs[0] != out {
		t.Fatalf("outs %v err %v", outs, err)
	}
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}
