// SPDX-License-Identifier: Apache-2.0

package kafkatrace_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// A record that already carries a stale traceparent gets exactly one, new,
// traceparent header when the context is injected.
func ExampleTracer_Inject() {
	tr := kafkatrace.New(kafkatrace.WithPropagator(propagation.TraceContext{}))
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	}))
	r := &kgo.Record{Headers: []kgo.RecordHeader{
		{Key: "traceparent", Value: []byte("00-11111111111111111111111111111111-2222222222222222-01")},
		{Key: "content-type", Value: []byte("application/json")},
	}}
	tr.Inject(ctx, r)
	for _, h := range r.Headers {
		fmt.Printf("%s: %s\n", h.Key, h.Value)
	}
	// Output:
	// content-type: application/json
	// traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
}

// One record from producer to consumer, without a broker. The producer
// injects its span's context into the record's headers (installed on a
// client with kgo.WithHooks, the Tracer does it in a "send" span of its
// own); the consumer's StartProcess records how long the record waited and
// continues the producer's trace in a "process" span, which EndProcess
// ends. Test code may use the SDK: the package itself needs only the API.
func ExampleTracer_StartProcess() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tr := kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithPropagator(propagation.TraceContext{}))

	// Produce.
	ctx, publish := tp.Tracer("example").Start(context.Background(), "publish")
	r := &kgo.Record{Topic: "requests", Value: []byte("hello"), Timestamp: time.Now()}
	tr.Inject(ctx, r)
	publish.End()

	// Consume.
	pctx, span, wait := tr.StartProcess(context.Background(), r, -1)
	var err error // what the handler, given pctx, returned
	tr.EndProcess(pctx, r, wait.End, span, err, "")

	for _, s := range spans.Ended() {
		fmt.Printf("%-16s %-8s same trace: %t, child of publish: %t\n", s.Name(), s.SpanKind(),
			s.SpanContext().TraceID() == publish.SpanContext().TraceID(), s.Parent().SpanID() == publish.SpanContext().SpanID())
	}
	// Output:
	// publish          internal same trace: true, child of publish: false
	// wait requests    internal same trace: true, child of publish: true
	// process requests consumer same trace: true, child of publish: true
}
