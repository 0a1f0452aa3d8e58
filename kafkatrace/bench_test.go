package kafkatrace

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func benchTracer(b *testing.B, sampler sdktrace.Sampler, opts ...Option) *Tracer {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler)) // no processor: measures span work, not export
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts = append([]Option{
		WithTracerProvider(tp), WithPropagator(testPropagator()), WithMetrics(NewMetrics()),
		WithClientID("bench"), WithConsumerGroup("g"), WithServerAddress("127.0.0.1:9092"),
	}, opts...)
	return New(opts...)
}

func BenchmarkInjectExtract(b *testing.B) {
	tr := benchTracer(b, sdktrace.AlwaysSample())
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled,
	}))
	r := &kgo.Record{Headers: make([]kgo.RecordHeader, 0, 4)}
	b.ReportAllocs()
	for b.Loop() {
		tr.Inject(ctx, r)
		if !trace.SpanContextFromContext(tr.Extract(context.Background(), r)).IsValid() {
			b.Fatal("lost context")
		}
	}
}

func BenchmarkSendHooks(b *testing.B) {
	tr := benchTracer(b, sdktrace.AlwaysSample())
	b.ReportAllocs()
	for b.Loop() {
		r := &kgo.Record{Topic: "retrieval.requests", Key: []byte("01JDQ3Z7W8X2K4M6N8P0R2T4V6"), Value: make([]byte, 300)}
		tr.OnProduceRecordBuffered(r)
		tr.OnProduceRecordUnbuffered(r, nil)
	}
}

func benchmarkStartProcess(b *testing.B, sampler sdktrace.Sampler, flags trace.TraceFlags, opts ...Option) {
	tr := benchTracer(b, sampler, opts...)
	parent := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: flags,
	}))
	r := &kgo.Record{Topic: "retrieval.requests", Partition: 1, Offset: 10, Key: []byte("k"), Value: make([]byte, 300), Timestamp: time.Now()}
	tr.Inject(parent, r)
	b.ReportAllocs()
	for b.Loop() {
		ctx, span, qw := tr.StartProcess(context.Background(), r, 20)
		tr.EndProcess(ctx, r, qw.End, span, nil, "")
	}
}

// BenchmarkStartProcess measures the consumer-side cost per record: extract,
// wait span, process span and the messaging metrics. "unsampled" goes
// through the SDK's sampler; "unsampled-parent-based" is the fast path of
// WithParentBasedSampling, which starts no span.
func BenchmarkStartProcess(b *testing.B) {
	b.Run("sampled", func(b *testing.B) {
		benchmarkStartProcess(b, sdktrace.ParentBased(sdktrace.AlwaysSample()), trace.FlagsSampled)
	})
	b.Run("unsampled", func(b *testing.B) {
		benchmarkStartProcess(b, sdktrace.ParentBased(sdktrace.AlwaysSample()), 0)
	})
	b.Run("unsampled-parent-based", func(b *testing.B) {
		benchmarkStartProcess(b, sdktrace.ParentBased(sdktrace.AlwaysSample()), 0, WithParentBasedSampling())
	})
}
