// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"bytes"
	"context"
	"fmt"
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
		WithKafkaClusterID("MkU3OEVBNTcwNTJENDM2Qk"),
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
// WithParentBasedSampling, which starts no span; "trust-boundary" starts a
// new root linked to the record's context (WithTrustBoundary).
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
	// At a trust boundary the record's context is only linked: a new root
	// sampled by our sampler, here always.
	b.Run("trust-boundary", func(b *testing.B) {
		benchmarkStartProcess(b, sdktrace.ParentBased(sdktrace.AlwaysSample()), trace.FlagsSampled, WithParentBasedSampling(), WithTrustBoundary())
	})
}

// hostileRecords are records an outside producer may send to make header
// extraction expensive; each carries a valid sampled traceparent.
func hostileRecords() map[string]*kgo.Record {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	valid := kgo.RecordHeader{Key: "traceparent", Value: []byte(tp)}

	// One member of 1 MiB: the library would scan all of it and copy it
	// into its parse error.
	state := append([]byte("big="), bytes.Repeat([]byte{'x'}, 1<<20-4)...)
	// 1 MiB of small valid members: the library would stop at the 33rd
	// and drop them all.
	var stateMembers []byte
	for i := 0; len(stateMembers) < 1<<20; i++ {
		stateMembers = fmt.Appendf(stateMembers, "k%d=v%d,", i, i)
	}
	stateMembers = stateMembers[:len(stateMembers)-1]

	// 1,000 traceparent headers, the valid one last (it wins); tracestate
	// and baggage are absent, so their lookups scan every header.
	dups := make([]kgo.RecordHeader, 0, 1000)
	for i := range 999 {
		dups = append(dups, kgo.RecordHeader{Key: "traceparent", Value: fmt.Appendf(nil, "00-%032x-b7ad6b7169203331-01", i+1)})
	}
	dups = append(dups, valid)

	// 100 KB of well-formed members.
	var bag []byte
	for i := 0; len(bag) < 100_000; i++ {
		bag = fmt.Appendf(bag, "key%d=value%d,", i, i)
	}
	bag = bag[:len(bag)-1]

	return map[string]*kgo.Record{
		"1MiB-tracestate":         {Headers: []kgo.RecordHeader{valid, {Key: "tracestate", Value: state}}},
		"1MiB-tracestate-members": {Headers: []kgo.RecordHeader{valid, {Key: "tracestate", Value: stateMembers}}},
		"1000-duplicate-headers":  {Headers: dups},
		"100KB-baggage":           {Headers: []kgo.RecordHeader{valid, {Key: "baggage", Value: bag}}},
	}
}

// BenchmarkExtractHostile measures Extract on hostile headers: the cost must
// stay bounded whatever the header sizes (nothing oversized is parsed).
func BenchmarkExtractHostile(b *testing.B) {
	recs := hostileRecords()
	for _, name := range []string{"1MiB-tracestate", "1MiB-tracestate-members", "1000-duplicate-headers", "100KB-baggage"} {
		b.Run(name, func(b *testing.B) {
			tr := benchTracer(b, sdktrace.AlwaysSample())
			r := recs[name]
			b.ReportAllocs()
			for b.Loop() {
				if !trace.SpanContextFromContext(tr.Extract(context.Background(), r)).IsValid() {
					b.Fatal("lost the valid traceparent")
				}
			}
		})
	}
}
