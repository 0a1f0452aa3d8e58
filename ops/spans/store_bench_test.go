// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
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

// BenchmarkStoreRetained fills a Store, on, with traces shaped like a
// request's (one root and spansPerTrace−1 children, each with the
// attributes a process span carries), to once and to four times its
// bound, and reports the heap it retains then (MiB after a GC): the
// console's memory while a browser looks. The two are equal when the
// Store is bounded; the first is the console's ceiling for such traces.
func BenchmarkStoreRetained(b *testing.B) {
	for _, spansPerTrace := range []int{15, DefaultMaxSpansPerTrace} {
		for _, fill := range []int{1, 4} {
			b.Run(fmt.Sprintf("spans-%d/fill-%dx", spansPerTrace, fill), func(b *testing.B) {
				for b.Loop() {
					store := NewStore()
					store.Start()
					tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store), sdktrace.WithSampler(sdktrace.AlwaysSample()))
					tr := tp.Tracer("bench")
					before := heapInUse()
					for range fill * DefaultMaxTraces {
						ctx, root := tr.Start(context.Background(), "POST /v1/search")
						for range spansPerTrace - 1 {
							_, sp := tr.Start(ctx, "process retrieval.requests", trace.WithAttributes(
								attribute.String("messaging.system", "kafka"),
								attribute.String("messaging.destination.name", "retrieval.requests"),
								attribute.String("messaging.consumer.group.name", "retrieval"),
								attribute.Int("messaging.destination.partition.id", 3),
								attribute.Int64("messaging.kafka.offset", 123456),
								attribute.String("messaging.kafka.message.key", "01JDQ3Z7W8X2K4M6N8P0R2T4V6"),
							))
							sp.End()
						}
						root.End()
					}
					b.ReportMetric(float64(heapInUse()-before)/(1<<20), "retained-MiB")
					if n := len(store.Traces()); n != DefaultMaxTraces {
						b.Fatalf("%d traces kept, want the bound %d", n, DefaultMaxTraces)
					}
					_ = tp.Shutdown(context.Background())
				}
			})
		}
	}
}

// heapInUse is the live heap after a garbage collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
