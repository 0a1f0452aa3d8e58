// SPDX-License-Identifier: Apache-2.0

package otlpwire_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// messagingSpans returns n spans shaped like the relay's: send, receive
// and process spans of Kafka messages with about 12 attributes each, a
// link on every process span, from three instrumentation scopes.
func messagingSpans(tb testing.TB, n int) []sdktrace.ReadOnlySpan {
	tb.Helper()
	rec := tracetest.NewSpanRecorder()
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", "kretrieve-relay"),
		attribute.String("service.instance.id", "3f2a9c1e-8d4b-4e2f-9a51-0c7d6b1e2f3a"),
		attribute.String("host.name", "worker-7")))
	if err != nil {
		tb.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracers := []trace.Tracer{
		tp.Tracer("github.com/kretrieve/kretrieve/kafkatrace", trace.WithInstrumentationVersion("0.1.0")),
		tp.Tracer("github.com/twmb/franz-go/plugin/kotel", trace.WithInstrumentationVersion("v1.7.1")),
		tp.Tracer("github.com/kretrieve/kretrieve/consumers"),
	}
	ctx := context.Background()
	for i := range n {
		kind, op := trace.SpanKindProducer, "send"
		switch i % 3 {
		case 1:
			kind, op = trace.SpanKindConsumer, "receive"
		case 2:
			kind, op = trace.SpanKindConsumer, "process"
		}
		opts := []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithAttributes(
			attribute.String("messaging.system", "kafka"),
			attribute.String("messaging.operation.name", op),
			attribute.String("messaging.operation.type", op),
			attribute.String("messaging.destination.name", "retrieval.requests"),
			attribute.String("messaging.destination.partition.id", strconv.Itoa(i%12)),
			attribute.Int64("messaging.kafka.offset", int64(1_000_000+i)),
			attribute.Int("messaging.message.body.size", 412+i%300),
			attribute.String("messaging.consumer.group.name", "retrieval"),
			attribute.String("messaging.client.id", "kretrieve-relay-7"),
			attribute.String("server.address", "kafka-0.kafka.svc.cluster.local"),
			attribute.Int("server.port", 9092),
			attribute.String("kretrieve.request.id", fmt.Sprintf("req-%08d", i/3)),
		)}
		if op == "process" {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: trace.TraceID{byte(i), 1}, SpanID: trace.SpanID{byte(i), 2}, TraceFlags: trace.FlagsSampled, Remote: true,
			})}))
		}
		_, span := tracers[i%len(tracers)].Start(ctx, op+" retrieval.requests", opts...)
		span.End()
	}
	return rec.Ended()
}

// BenchmarkEncode measures a 2048-span batch of messaging spans: the
// otlpwire encoder alone, and a whole export (encode, send, response) by
// otlpwire and by otlptracehttp to a collector that discards the body.
// Besides the per-batch ns/op, B/op and allocs/op it reports ns/span and
// allocs/span.
func BenchmarkEncode(b *testing.B) {
	spans := messagingSpans(b, 2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(srv.Close)
	url := srv.URL + "/v1/traces"

	b.Run("otlpwire/encode", func(b *testing.B) {
		encode := otlpwire.NewEncodeFunc()
		var size int
		perSpan(b, len(spans), func() { size = len(encode(spans)) })
		b.ReportMetric(float64(size)/float64(len(spans)), "bytes/span")
	})
	b.Run("otlpwire/export", func(b *testing.B) {
		exp, err := otlpwire.New(otlpwire.Config{EndpointURL: url, Retry: otlpwire.DefaultRetry})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
		perSpan(b, len(spans), func() {
			if err := exp.ExportSpans(b.Context(), spans); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("otlptracehttp/export", func(b *testing.B) {
		exp, err := otlptracehttp.New(b.Context(), otlptracehttp.WithEndpointURL(url))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
		perSpan(b, len(spans), func() {
			if err := exp.ExportSpans(b.Context(), spans); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// perSpan runs op b.N times and reports ns/span and allocs/span for
// batches of n spans.
func perSpan(b *testing.B, n int, op func()) {
	b.ReportAllocs()
	op() // warm up reused buffers and connections
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		op()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	spans := float64(b.N * n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/spans, "ns/span")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/spans, "allocs/span")
}

// Encoding allocates nothing once the buffers have grown, trace states,
// events and links included. (Slice and map attribute values would: the
// attribute package copies them out.)
func TestEncodeDoesNotAllocate(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=abc,other=x-1")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true,
	})
	stubs := tracetest.SpanStubsFromReadOnlySpans(messagingSpans(t, 300))
	for i := range stubs {
		stubs[i].SpanContext = stubs[i].SpanContext.WithTraceState(ts)
		stubs[i].Parent = sc
		stubs[i].Events = []sdktrace.Event{{Name: "retry", Attributes: []attribute.KeyValue{attribute.Int("attempt", i)}}}
		stubs[i].Links = []sdktrace.Link{{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.Bool("b", true)}}}
	}
	spans := stubs.Snapshots()
	encode := otlpwire.NewEncodeFunc()
	encode(spans)
	if allocs := testing.AllocsPerRun(10, func() { encode(spans) }); allocs != 0 {
		t.Errorf("%v allocations per batch, want 0", allocs)
	}
}
