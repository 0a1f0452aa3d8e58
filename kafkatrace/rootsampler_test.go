// SPDX-License-Identifier: Apache-2.0

package kafkatrace_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/tracecontext"
	"github.com/kretrieve/kretrieve/tracing"
)

func rootTracer(t *testing.T, rs *tracing.RootSampler, opts ...kafkatrace.Option) (*kafkatrace.Tracer, *sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(append(rs.TracerProviderOptions(), sdktrace.WithSpanProcessor(rec))...)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts = append([]kafkatrace.Option{
		kafkatrace.WithTracerProvider(tp), kafkatrace.WithParentBasedSampling(), kafkatrace.WithRootSampler(rs),
		kafkatrace.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		kafkatrace.WithMetrics(kafkatrace.NewMetrics()),
	}, opts...)
	return kafkatrace.New(opts...), tp, rec
}

// TestRootSamplerSendSpans: with a RootSampler, the root send spans of
// records produced without a span are sampled exactly as the sampler
// decides on their trace ids; a sampled one is the SDK's recording span,
// ended at the ack with its attributes, and an unsampled one starts no
// span: the record carries its traceparent (flags 00) and its Context the
// non-recording span the provider would have returned.
func TestRootSamplerSendSpans(t *testing.T) {
	rs, err := tracing.NewRootSampler("parentbased_traceidratio", "0.5")
	if err != nil {
		t.Fatal(err)
	}
	tr, tp, rec := rootTracer(t, rs, kafkatrace.WithPathways("svc"))
	ref := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.5))
	const n = 2000
	sampled := 0
	for i := range n {
		r := &kgo.Record{Topic: "a", Partition: 1, Value: []byte("v")}
		tr.OnProduceRecordBuffered(r)
		sc, ok := tracecontext.ParseTraceparent((tracecontext.HeaderCarrier{Record: r}).Get(tracecontext.TraceparentHeader))
		if !ok {
			t.Fatalf("record %d: no valid traceparent", i)
		}
		want := ref.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: sc.TraceID(), Name: "send a", Kind: trace.SpanKindProducer})
		if sc.IsSampled() != (want.Decision == sdktrace.RecordAndSample) {
			t.Fatalf("record %d: sampled %v, the sampler says %v", i, sc.IsSampled(), want.Decision)
		}
		span := trace.SpanFromContext(r.Context)
		if got := span.SpanContext(); got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() || got.IsRemote() || got.IsSampled() != sc.IsSampled() {
			t.Fatalf("record %d: Context's span %v, traceparent %v", i, got, sc)
		}
		if span.IsRecording() != sc.IsSampled() {
			t.Fatalf("record %d: recording %v, sampled %v", i, span.IsRecording(), sc.IsSampled())
		}
		if !sc.IsSampled() && span.TracerProvider() != tp {
			t.Fatalf("record %d: non-recording span's provider %v", i, span.TracerProvider())
		}
		if sc.IsSampled() {
			sampled++
		}
		tr.OnProduceRecordUnbuffered(r, nil)
	}
	if sampled < n/2-200 || sampled > n/2+200 {
		t.Fatalf("%d of %d sampled at 0.5", sampled, n)
	}
	ended := rec.Ended()
	if len(ended) != sampled || len(rec.Started()) != sampled {
		t.Fatalf("%d spans started, %d ended, want %d", len(rec.Started()), len(ended), sampled)
	}
	for _, s := range ended {
		if s.Name() != "send a" || s.SpanKind() != trace.SpanKindProducer || len(s.Attributes()) < 5 {
			t.Fatalf("send span %q kind %v attributes %v", s.Name(), s.SpanKind(), s.Attributes())
		}
	}
}

// TestRootSamplerUnsampledRootAllocatesNothing: an unsampled root record's
// produce hooks allocate nothing (the send contexts come from slabs).
func TestRootSamplerUnsampledRootAllocatesNothing(t *testing.T) {
	rs, err := tracing.NewRootSampler("parentbased_traceidratio", "0")
	if err != nil {
		t.Fatal(err)
	}
	tr, _, rec := rootTracer(t, rs, kafkatrace.WithPathways("svc"))
	r := &kgo.Record{Topic: "a", Partition: 1, Value: []byte("v")}
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, nil)
	if n := testing.AllocsPerRun(1000, func() {
		r.Headers, r.Context = nil, nil
		tr.OnProduceRecordBuffered(r)
		tr.OnProduceRecordUnbuffered(r, nil)
	}); n != 0 {
		t.Errorf("%v allocations per unsampled root record", n)
	}
	if n := len(rec.Started()); n != 0 {
		t.Errorf("%d spans started at ratio 0", n)
	}
}

// countingSampler is a custom sampler: it counts the roots it is asked
// about and samples none.
type countingSampler struct{ asked atomic.Int64 }

func (s *countingSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.asked.Add(1)
	return sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState()}
}
func (*countingSampler) Description() string { return "counting" }

// TestCustomSamplerGoesThroughTheSDK: without a RootSampler (a custom
// sampler has none, see tracing.NewRootSampler) every root send span is
// decided by the provider's sampler.
func TestCustomSamplerGoesThroughTheSDK(t *testing.T) {
	s := &countingSampler{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(s)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithParentBasedSampling(),
		kafkatrace.WithPropagator(propagation.TraceContext{}))
	for range 10 {
		r := &kgo.Record{Topic: "a", Value: []byte("v")}
		tr.OnProduceRecordBuffered(r)
		tr.OnProduceRecordUnbuffered(r, nil)
	}
	if got := s.asked.Load(); got != 10 {
		t.Fatalf("the custom sampler was asked %d times for 10 roots", got)
	}
}

// BenchmarkRootSendHooks: the produce hooks of a record that starts an
// unsampled trace (ratio 0, pathways on), its root decided by the SDK's
// span start ("sdk") or by a RootSampler ("root-sampler").
func BenchmarkRootSendHooks(b *testing.B) {
	rs, err := tracing.NewRootSampler("parentbased_traceidratio", "0")
	if err != nil {
		b.Fatal(err)
	}
	for _, withRoot := range []bool{false, true} {
		name := "sdk"
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(rs.Sampler()))
		opts := []kafkatrace.Option{
			kafkatrace.WithTracerProvider(tp), kafkatrace.WithParentBasedSampling(), kafkatrace.WithPathways("svc"),
			kafkatrace.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
			kafkatrace.WithMetrics(kafkatrace.NewMetrics()),
		}
		if withRoot {
			name = "root-sampler"
			tp = sdktrace.NewTracerProvider(rs.TracerProviderOptions()...)
			opts = append(opts, kafkatrace.WithTracerProvider(tp), kafkatrace.WithRootSampler(rs))
		}
		b.Run(name, func(b *testing.B) {
			tr := kafkatrace.New(opts...)
			r := &kgo.Record{Topic: "a", Partition: 1, Value: make([]byte, 300)}
			b.ReportAllocs()
			for b.Loop() {
				r.Headers, r.Context = nil, nil
				tr.OnProduceRecordBuffered(r)
				tr.OnProduceRecordUnbuffered(r, nil)
			}
		})
		_ = tp.Shutdown(context.Background())
	}
}
