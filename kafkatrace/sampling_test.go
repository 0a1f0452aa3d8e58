// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/tracecontext"
)

const unsampledParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

func newSampledTracer(t *testing.T, sampler sdktrace.Sampler, opts ...Option) (*Tracer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts = append([]Option{WithTracerProvider(tp), WithPropagator(testPropagator()), WithMetrics(NewMetrics())}, opts...)
	return New(opts...), rec
}

func TestParentBasedSamplingSkipsUnsampledRecords(t *testing.T) {
	tr, rec := newSampledTracer(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), WithParentBasedSampling(), WithConsumerGroup("g"))
	in := &kgo.Record{Topic: "a", Timestamp: time.Now(), Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte(unsampledParent)}}}

	ctx, span, _ := tr.StartProcess(context.Background(), in, -1)
	if span.IsRecording() {
		t.Fatal("process span of an unsampled record is recording")
	}
	sc := trace.SpanContextFromContext(ctx)
	if sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || sc.SpanID().String() != "b7ad6b7169203331" || sc.IsSampled() || !sc.IsRemote() {
		t.Fatalf("handler context %v, want the remote unsampled context", sc)
	}

	// The handler's own spans and its produced records stay unsampled, in
	// the same trace, and the traceparent passes through unchanged.
	_, child := tr.tracer.Start(ctx, "search")
	child.End()
	out := &kgo.Record{Topic: "b", Value: []byte("v"), Context: ctx}
	tr.OnProduceRecordBuffered(out)
	if got := (tracecontext.HeaderCarrier{Record: out}).Get("traceparent"); got != unsampledParent {
		t.Fatalf("downstream traceparent %q, want %q", got, unsampledParent)
	}
	tr.OnProduceRecordUnbuffered(out, nil)
	tr.EndProcess(ctx, in, time.Now(), span, nil, "")

	if n := len(rec.Ended()) + len(rec.Started()); n != 0 {
		t.Fatalf("%d spans for an unsampled record, want none", n)
	}
	counted := map[string]int64{}
	for _, s := range tr.metrics.Messaging() {
		counted[s.Op] += s.Count
	}
	if counted[otelnames.OpProcess] == 0 {
		t.Fatal("unsampled record not counted as consumed")
	}
	if counted[otelnames.OpSend] == 0 {
		t.Fatal("unsampled record not counted as sent")
	}
}

func TestWithoutParentBasedSamplingTheSamplerDecides(t *testing.T) {
	// A sampler that ignores the parent must still see every record.
	tr, rec := newSampledTracer(t, sdktrace.AlwaysSample())
	in := &kgo.Record{Topic: "a", Timestamp: time.Now(), Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte(unsampledParent)}}}
	ctx, span, qw := tr.StartProcess(context.Background(), in, -1)
	tr.EndProcess(ctx, in, qw.End, span, nil, "")
	if n := len(rec.Ended()); n != 2 {
		t.Fatalf("ended %d spans, want wait and process", n)
	}
}

// recordOnly records every span without sampling it.
type recordOnly struct{}

func (recordOnly) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly, Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState()}
}
func (recordOnly) Description() string { return "RecordOnly" }

func TestRecordingUnsampledParentIsNotSkipped(t *testing.T) {
	tr, rec := newSampledTracer(t, recordOnly{}, WithParentBasedSampling())
	ctx, parent := tr.tracer.Start(context.Background(), "root")
	r := &kgo.Record{Topic: "b", Context: ctx}
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, nil)
	parent.End()
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	if len(names) != 2 || names[0] != "send b" {
		t.Fatalf("ended %q, want the send span then root: a recording parent is never skipped", names)
	}
}
