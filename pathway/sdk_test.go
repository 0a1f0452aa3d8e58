// SPDX-License-Identifier: Apache-2.0

package pathway_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/pathway"
)

// The gate of the hand-written histogram: the OpenTelemetry SDK's base-2
// exponential histogram aggregation at pathway.Scale, fed the same
// measurements, must hold the same data (TestHistogramMatchesSDK), and
// recording into it must stay well below the SDK's cost
// (BenchmarkPathwayHistogram; `make bench` prints the ratio).

// sdkHistogram returns a Float64Histogram aggregated as a base-2
// exponential histogram at pathway.Scale with room for every bucket
// pathway keeps (so the SDK never scales down), and its reader.
func sdkHistogram(tb testing.TB) (metric.Float64Histogram, *sdkmetric.ManualReader) {
	tb.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithView(sdkmetric.NewView(
		sdkmetric.Instrument{Name: "latency"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 1 << 12, MaxScale: pathway.Scale}},
	)))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	h, err := mp.Meter("gate").Float64Histogram("latency", metric.WithUnit("s"))
	if err != nil {
		tb.Fatal(err)
	}
	return h, reader
}

// TestHistogramMatchesSDK: the same measurements (zeros, sub-microsecond,
// milliseconds, exact powers of two, minutes), recorded into a
// pathway.Histogram and into the SDK's exponential histogram at the same
// scale, give the same count, zero count, sum, scale, bucket offset and
// bucket counts; and every exemplar pathway keeps is one of the sampled
// measurements, with its trace.
func TestHistogramMatchesSDK(t *testing.T) {
	sdk, reader := sdkHistogram(t)
	var h pathway.Histogram
	rng := rand.New(rand.NewPCG(27, 8))
	values := []time.Duration{0, 0, time.Microsecond, time.Millisecond, time.Second, 2 * time.Second, 1500 * time.Millisecond, 3 * time.Minute}
	for range 5000 {
		values = append(values, time.Duration(math.Exp2(rng.Float64()*30-18)*float64(time.Second))) // 4 µs … 68 min
	}
	sampled := map[time.Duration]trace.SpanContext{}
	ctx := context.Background()
	for i, d := range values {
		var sc trace.SpanContext
		if i%97 == 0 {
			sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i), byte(i >> 8), 1}, SpanID: trace.SpanID{byte(i), 2}, TraceFlags: trace.FlagsSampled})
			sampled[d] = sc
		}
		h.Record(d, sc, int64(i+1))
		sdk.Record(ctx, d.Seconds())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	data := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.ExponentialHistogram[float64]).DataPoints[0]
	snap := h.Snapshot()
	if data.Scale != pathway.Scale || snap.Count != data.Count || snap.ZeroCount != data.ZeroCount {
		t.Errorf("scale %d count %d zeros %d, SDK scale %d count %d zeros %d", pathway.Scale, snap.Count, snap.ZeroCount, data.Scale, data.Count, data.ZeroCount)
	}
	if got, want := snap.Sum.Seconds(), data.Sum; math.Abs(got-want) > 1e-9*want {
		t.Errorf("sum %v s, SDK %v s", got, want)
	}
	counts := data.PositiveBucket.Counts
	offset := int(data.PositiveBucket.Offset)
	for len(counts) > 0 && counts[0] == 0 { // the SDK may keep empty buckets at the ends
		counts, offset = counts[1:], offset+1
	}
	for len(counts) > 0 && counts[len(counts)-1] == 0 {
		counts = counts[:len(counts)-1]
	}
	if snap.Offset != offset || len(snap.Buckets) != len(counts) {
		t.Fatalf("buckets from %d, %d of them; SDK from %d, %d of them", snap.Offset, len(snap.Buckets), offset, len(counts))
	}
	for i := range counts {
		if snap.Buckets[i] != counts[i] {
			t.Errorf("bucket %d: %d, SDK %d", snap.Offset+i, snap.Buckets[i], counts[i])
		}
	}
	if len(snap.Exemplars) == 0 {
		t.Fatal("no exemplars")
	}
	for _, e := range snap.Exemplars {
		sc, ok := sampled[e.Value]
		if !ok || sc.TraceID() != e.TraceID || sc.SpanID() != e.SpanID {
			t.Errorf("exemplar %v (trace %s) is not a sampled measurement", e.Value, e.TraceID)
		}
	}
}

// BenchmarkPathwayHistogram records one measurement (with a sampled span
// context one time in 64, as exemplars come) into a pathway.Histogram
// (kretrieve) and into the SDK's exponential histogram at the same scale
// with the series' attributes resolved once (sdk), on one goroutine (the
// SDK's lock would cost it more under contention).
func BenchmarkPathwayHistogram(b *testing.B) {
	values := make([]time.Duration, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range values {
		values[i] = time.Duration(rng.Int64N(int64(50 * time.Millisecond)))
	}
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	scOf := func(i int) trace.SpanContext {
		if i%64 == 0 {
			return sampled
		}
		return trace.SpanContext{}
	}
	b.Run("kretrieve", func(b *testing.B) {
		var h pathway.Histogram
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			h.Record(values[i%len(values)], scOf(i), int64(i))
		}
	})
	b.Run("sdk", func(b *testing.B) {
		h, _ := sdkHistogram(b)
		attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String("kretrieve.pathway.edge", "a→b"), attribute.String("kretrieve.pathway.measure", "edge")))
		b.ReportAllocs()
		plain, withSpan := context.Background(), trace.ContextWithSpanContext(context.Background(), sampled)
		for i := 0; b.Loop(); i++ {
			ctx := plain
			if scOf(i).IsValid() {
				ctx = withSpan
			}
			h.Record(ctx, values[i%len(values)].Seconds(), attrs)
		}
	})
}
