// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
)

// The gate of the hand-written messaging metrics: the OpenTelemetry SDK's
// synchronous instruments, fed the same records, must hold the same data
// (TestMessagingMetricsMatchSDK), and recording a record must stay well
// below the SDK's cost (BenchmarkMessagingMetrics; `make bench` prints the
// ratio). tracing.NewMetricsProducer's turning these stats into metricdata
// is tested in package tracing (metricsproducer_test.go).

// sdkMessaging is the SDK's version of a send series: the sent-messages
// counter and the operation-duration histogram with kafkatrace's bounds.
type sdkMessaging struct {
	reader   *sdkmetric.ManualReader
	sent     metric.Int64Counter
	duration metric.Float64Histogram
}

func newSDKMessaging(tb testing.TB) *sdkMessaging {
	tb.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m := mp.Meter("gate")
	sent, err := m.Int64Counter("messaging.client.sent.messages")
	if err != nil {
		tb.Fatal(err)
	}
	duration, err := m.Float64Histogram("messaging.client.operation.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(durationBounds...))
	if err != nil {
		tb.Fatal(err)
	}
	return &sdkMessaging{reader: reader, sent: sent, duration: duration}
}

// sendAttrs are a send series' attributes, written out from the semantic
// conventions rather than taken from kafkatrace.
func sendAttrs(topic string, partition string) attribute.Set {
	return attribute.NewSet(semconv.MessagingSystemKafka, semconv.MessagingOperationName(otelnames.OpSend),
		semconv.MessagingDestinationName(topic), semconv.MessagingDestinationPartitionID(partition))
}

// TestMessagingMetricsMatchSDK: the same sends (durations at and around
// every bucket bound, some records sampled) recorded by a Tracer and by
// the SDK's counter and histogram give the same attributes, count, sum,
// min, max, bounds, bucket counts and, bucket by bucket, the same
// exemplars (the last sampled measurement of each, as the SDK's aligned
// reservoir keeps).
func TestMessagingMetricsMatchSDK(t *testing.T) {
	tr := New(WithMetrics(NewMetrics()))
	sdk := newSDKMessaging(t)
	attrs := metric.WithAttributeSet(sendAttrs("requests", "3"))
	var values []time.Duration
	for _, b := range durationBounds {
		d := time.Duration(b * float64(time.Second))
		values = append(values, d, d-time.Microsecond, d+time.Microsecond)
	}
	rng := rand.New(rand.NewPCG(27, 8))
	for range 2000 {
		values = append(values, time.Duration(rng.Int64N(int64(12*time.Second))))
	}
	sampledAt, order := map[trace.SpanID]float64{}, []trace.SpanID(nil) // order: as recorded
	for i, d := range values {
		ctx, sc := context.Background(), trace.SpanContext{}
		if i%7 == 0 {
			sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i), byte(i >> 8), 9}, SpanID: trace.SpanID{1, byte(i >> 8), byte(i)}, TraceFlags: trace.FlagsSampled})
			sampledAt[sc.SpanID()] = d.Seconds()
			order = append(order, sc.SpanID())
			ctx = trace.ContextWithSpanContext(ctx, sc)
		}
		tr.recordSent("requests", 3, d, "", sc)
		sdk.sent.Add(ctx, 1, attrs)
		sdk.duration.Record(ctx, d.Seconds(), attrs)
	}
	var rm metricdata.ResourceMetrics
	if err := sdk.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var count metricdata.DataPoint[int64]
	var hist metricdata.HistogramDataPoint[float64]
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			count = d.DataPoints[0]
		case metricdata.Histogram[float64]:
			hist = d.DataPoints[0]
		}
	}
	var stats []MessagingStats
	for _, s := range tr.metrics.Messaging() {
		if s.Op == otelnames.OpSend {
			stats = append(stats, s)
		}
	}
	if len(stats) != 1 {
		t.Fatalf("%d send series, want 1", len(stats))
	}
	s := stats[0]
	if !s.Attrs.Equals(&count.Attributes) || !s.Attrs.Equals(&hist.Attributes) {
		t.Errorf("attributes %v, SDK %v", s.Attrs.ToSlice(), hist.Attributes.ToSlice())
	}
	h := s.Duration
	if s.Count != count.Value || h.Count != hist.Count {
		t.Errorf("count %d, histogram count %d; SDK %d, %d", s.Count, h.Count, count.Value, hist.Count)
	}
	if got := float64(h.Sum) / 1e9; math.Abs(got-hist.Sum) > 1e-9*hist.Sum {
		t.Errorf("sum %v s, SDK %v s", got, hist.Sum)
	}
	if mn, _ := hist.Min.Value(); time.Duration(h.Min).Seconds() != mn {
		t.Errorf("min %v, SDK %v s", time.Duration(h.Min), mn)
	}
	if mx, _ := hist.Max.Value(); time.Duration(h.Max).Seconds() != mx {
		t.Errorf("max %v, SDK %v s", time.Duration(h.Max), mx)
	}
	var bounds []float64
	for _, b := range h.Bounds {
		bounds = append(bounds, time.Duration(b).Seconds())
	}
	if !slices.Equal(bounds, hist.Bounds) || !slices.Equal(h.Counts, hist.BucketCounts) {
		t.Errorf("bounds %v counts %v; SDK bounds %v counts %v", bounds, h.Counts, hist.Bounds, hist.BucketCounts)
	}
	// Exemplars: both keep one per bucket that saw a sampled measurement,
	// each a sampled measurement of that bucket with its trace; kafkatrace
	// the last of them, the SDK one drawn uniformly (its aligned bucket
	// reservoir), so the buckets and the measurements are compared.
	bucketOf := func(v float64) int { i, _ := slices.BinarySearch(durationBounds, v); return i }
	last := map[int]trace.SpanID{}
	for _, id := range order {
		last[bucketOf(sampledAt[id])] = id
	}
	ours, theirs := map[int]trace.SpanID{}, map[int]trace.SpanID{}
	for _, e := range h.Exemplars {
		ours[bucketOf(e.Value.Seconds())] = e.SpanID
		if v, ok := sampledAt[e.SpanID]; !ok || v != e.Value.Seconds() {
			t.Errorf("exemplar %v of span %s is not that span's measurement", e.Value, e.SpanID)
		}
	}
	for _, e := range hist.Exemplars {
		id := trace.SpanID(e.SpanID)
		theirs[bucketOf(e.Value)] = id
		if v, ok := sampledAt[id]; !ok || v != e.Value {
			t.Errorf("SDK exemplar %v of span %s is not that span's measurement", e.Value, id)
		}
	}
	if len(ours) == 0 || !maps.Equal(ours, last) {
		t.Errorf("exemplars by bucket %v, want the last sampled of each %v", ours, last)
	}
	if len(ours) != len(theirs) || len(ours) != len(hist.Exemplars) {
		t.Errorf("exemplars in %d buckets (%d in all), SDK %d buckets (%d in all)", len(ours), len(h.Exemplars), len(theirs), len(hist.Exemplars))
	}
	for b := range theirs {
		if _, ok := ours[b]; !ok {
			t.Errorf("SDK has an exemplar in bucket %d, kafkatrace none", b)
		}
	}
}

// BenchmarkMessagingMetrics records one sent record's metrics, its count
// and its duration (with a sampled span context one time in 64), as
// kafkatrace does (kretrieve: the partition's cached series, atomic
// additions), with the SDK's counter and histogram given the series'
// attribute set resolved once (sdk, the SDK's best case), and with them
// given the attributes built per record as kotel's hooks do (sdk-attrs).
func BenchmarkMessagingMetrics(b *testing.B) {
	values := make([]time.Duration, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range values {
		values[i] = time.Duration(rng.Int64N(int64(50 * time.Millisecond)))
	}
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	plain, withSpan := context.Background(), trace.ContextWithSpanContext(context.Background(), sampled)
	b.Run("kretrieve", func(b *testing.B) {
		tr := New(WithMetrics(NewMetrics()))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			sc := trace.SpanContext{}
			if i%64 == 0 {
				sc = sampled
			}
			tr.recordSent("requests", int32(i%6), values[i%len(values)], "", sc)
		}
	})
	b.Run("sdk", func(b *testing.B) {
		sdk := newSDKMessaging(b)
		var sets [6]metric.MeasurementOption
		for p := range sets {
			sets[p] = metric.WithAttributeSet(sendAttrs("requests", string(rune('0'+p))))
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ctx := plain
			if i%64 == 0 {
				ctx = withSpan
			}
			sdk.sent.Add(ctx, 1, sets[i%6])
			sdk.duration.Record(ctx, values[i%len(values)].Seconds(), sets[i%6])
		}
	})
	b.Run("sdk-attrs", func(b *testing.B) {
		sdk := newSDKMessaging(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ctx := plain
			if i%64 == 0 {
				ctx = withSpan
			}
			attrs := metric.WithAttributes(semconv.MessagingSystemKafka, semconv.MessagingOperationName(otelnames.OpSend),
				semconv.MessagingDestinationName("requests"), semconv.MessagingDestinationPartitionID(string(rune('0'+i%6))))
			sdk.sent.Add(ctx, 1, attrs)
			sdk.duration.Record(ctx, values[i%len(values)].Seconds(), attrs)
		}
	})
}
