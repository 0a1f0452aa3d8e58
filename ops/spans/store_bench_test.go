package spans

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkSpanEnd is a span started and ended on a provider that exports
// every span (an exporter that drops them, behind a batch processor as the
// binary's OTLP one is), without the Store and with it registered but off
// (the console's while no browser has asked since start): what `run
// --serve` pays per span while nobody looks. make bench's ratio row
// "span end, idle console / without" holds it to 1.05.
func BenchmarkSpanEnd(b *testing.B) {
	for _, variant := range []string{"without", "idle-console"} {
		b.Run(variant, func(b *testing.B) {
			opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(discard{}), sdktrace.WithSampler(sdktrace.AlwaysSample())}
			if variant == "idle-console" {
				opts = append(opts, sdktrace.WithSpanProcessor(NewStore()))
			}
			tp := sdktrace.NewTracerProvider(opts...)
			defer func() { _ = tp.Shutdown(context.Background()) }()
			tr := tp.Tracer("bench")
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_, sp := tr.Start(ctx, "process retrieval.requests")
				sp.End()
			}
		})
	}
}

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
