package kafkatrace_test

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/propagation"
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
