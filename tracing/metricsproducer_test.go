// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/tracing"
)

// collect reads m through a real SDK reader, as an exporter would.
func collect(t *testing.T, m *kafkatrace.Metrics, opts ...tracing.ProducerOption) map[string]metricdata.Aggregation {
	t.Helper()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(tracing.NewMetricsProducer(m, opts...)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != kafkatrace.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, mt := range sm.Metrics {
			out[mt.Name] = mt.Data
		}
	}
	return out
}

func attr(dp metricdata.HistogramDataPoint[float64], key string) string {
	v, _ := dp.Attributes.Value(attributeKey(key))
	return v.String()
}

func TestMetricsProducedThroughSDKReader(t *testing.T) {
	m := kafkatrace.NewMetrics()
	producer := kafkatrace.New(kafkatrace.WithPropagator(testPropagator()), kafkatrace.WithMetrics(m))
	worker := kafkatrace.New(kafkatrace.WithPropagator(testPropagator()), kafkatrace.WithMetrics(m), kafkatrace.WithConsumerGroup("g"))

	for i, err := range []error{nil, nil, kerr.MessageTooLarge} {
		r := &kgo.Record{Topic: "t", Partition: 2, Value: []byte("v")}
		producer.OnProduceRecordBuffered(r)
		if i == 1 {
			time.Sleep(30 * time.Millisecond) // lands in a bucket above 25 ms
		}
		producer.OnProduceRecordUnbuffered(r, err)
	}
	for i := range 4 {
		r := &kgo.Record{Topic: "t", Partition: 2, Offset: int64(i), Timestamp: time.Now().Add(-2 * time.Second)}
		ctx, span, qw := worker.StartProcess(context.Background(), r, -1)
		var err error
		if i == 3 {
			err = errors.New("boom")
		}
		worker.EndProcess(ctx, r, qw.End, span, err, "handler_error")
	}

	got := collect(t, m)
	sent := got["messaging.client.sent.messages"].(metricdata.Sum[int64])
	if !sent.IsMonotonic || sent.Temporality != metricdata.CumulativeTemporality {
		t.Fatalf("sent: %+v", sent)
	}
	bySeries := map[string]int64{}
	for _, dp := range sent.DataPoints {
		p, _ := dp.Attributes.Value("messaging.destination.partition.id")
		e, _ := dp.Attributes.Value("error.type")
		bySeries[p.String()+"/"+e.String()] = dp.Value
	}
	if bySeries["2/"] != 2 || bySeries["/MESSAGE_TOO_LARGE"] != 1 || len(bySeries) != 2 {
		t.Fatalf("sent series %v, want 2 on partition 2 and 1 MESSAGE_TOO_LARGE without partition", bySeries)
	}

	opDur := got["messaging.client.operation.duration"].(metricdata.Histogram[float64])
	for _, dp := range opDur.DataPoints {
		if attr(dp, "error.type") != "" {
			continue
		}
		if dp.Count != 2 {
			t.Fatalf("send duration count %d, want 2", dp.Count)
		}
		max, _ := dp.Max.Value()
		if max < 0.03 || dp.Sum < 0.03 {
			t.Fatalf("send duration max %v sum %v, want ≥ 30 ms", max, dp.Sum)
		}
		// 0.025 is the 3rd bound: the slow send is counted above it.
		var above uint64
		for i, b := range dp.Bounds {
			if b >= 0.025 {
				for _, c := range dp.BucketCounts[i+1:] {
					above += c
				}
				break
			}
		}
		if above != 1 {
			t.Fatalf("buckets %v over %v: %d above 25 ms, want 1", dp.BucketCounts, dp.Bounds, above)
		}
	}

	consumed := got["messaging.client.consumed.messages"].(metricdata.Sum[int64])
	if len(consumed.DataPoints) != 1 || consumed.DataPoints[0].Value != 4 {
		t.Fatalf("consumed %+v, want one series of 4", consumed.DataPoints)
	}
	if g, _ := consumed.DataPoints[0].Attributes.Value("messaging.consumer.group.name"); g.AsString() != "g" {
		t.Fatalf("consumed without the group: %v", consumed.DataPoints[0].Attributes)
	}
	proc := got["messaging.process.duration"].(metricdata.Histogram[float64])
	counts := map[string]uint64{}
	for _, dp := range proc.DataPoints {
		counts[attr(dp, "error.type")] = dp.Count
	}
	if counts[""] != 3 || counts["handler_error"] != 1 {
		t.Fatalf("process duration counts by error.type %v, want 3 ok and 1 handler_error", counts)
	}
	qw := got[otelnames.MetricQueueWait].(metricdata.Histogram[float64])
	if len(qw.DataPoints) != 1 || qw.DataPoints[0].Count != 4 {
		t.Fatalf("queue wait %+v", qw.DataPoints)
	}
	if min, _ := qw.DataPoints[0].Min.Value(); min < 2 || qw.DataPoints[0].Sum < 8 {
		t.Fatalf("queue wait min %v sum %v, want ≥ 2 s each", min, qw.DataPoints[0].Sum)
	}
}

func TestMetricsEmptyProducesNothing(t *testing.T) {
	if got := collect(t, kafkatrace.NewMetrics()); len(got) != 0 {
		t.Fatalf("empty kafkatrace.Metrics produced %v", got)
	}
}

func attributeKey(k string) attribute.Key { return attribute.Key(k) }

// TestPathwayMetricExportedWithExemplars reads kretrieve.pathway.latency
// and the queue-wait and process histograms through a real SDK reader.
func TestPathwayMetricExportedWithExemplars(t *testing.T) {
	m := kafkatrace.NewMetrics()
	gw, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	out := &kgo.Record{Topic: "req", Value: []byte("q")}
	produce(gw, out)
	in := consumed(out)
	ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
	wk.EndProcess(ctx, in, qw.End, span, nil, "")
	traceID := span.SpanContext().TraceID()

	got := collect(t, m)
	hist, ok := got[otelnames.MetricPathwayLatency].(metricdata.ExponentialHistogram[float64])
	if !ok {
		t.Fatalf("%s is %T", otelnames.MetricPathwayLatency, got[otelnames.MetricPathwayLatency])
	}
	if hist.Temporality != metricdata.CumulativeTemporality {
		t.Error("not cumulative by default")
	}
	seen := map[string]bool{}
	for _, dp := range hist.DataPoints {
		edge, _ := dp.Attributes.Value(otelnames.PathwayEdge)
		measure, _ := dp.Attributes.Value(otelnames.PathwayMeasure)
		dir, _ := dp.Attributes.Value(otelnames.PathwayDirection)
		seen[edge.AsString()+"/"+measure.AsString()+"/"+dir.AsString()] = true
		if dp.Scale != pathway.Scale || dp.Count != 1 {
			t.Errorf("point %v: scale %d count %d", dp.Attributes, dp.Scale, dp.Count)
		}
		if len(dp.Exemplars) != 1 || !bytes.Equal(dp.Exemplars[0].TraceID, traceID[:]) {
			t.Errorf("point %v: exemplars %+v, want one of trace %s", dp.Attributes.ToSlice(), dp.Exemplars, traceID)
		}
	}
	for _, want := range []string{"gw → req/edge/out", "gw → req/origin/out", "req → g/edge/in", "req → g/origin/in"} {
		if !seen[want] {
			t.Errorf("no series %s in %v", want, seen)
		}
	}
	for _, name := range []string{otelnames.MetricQueueWait, "messaging.process.duration"} {
		h := got[name].(metricdata.Histogram[float64])
		var ex []metricdata.Exemplar[float64]
		for _, dp := range h.DataPoints {
			ex = append(ex, dp.Exemplars...)
		}
		if len(ex) != 1 || !bytes.Equal(ex[0].TraceID, traceID[:]) || len(ex[0].SpanID) != 8 {
			t.Errorf("%s exemplars %+v, want one of trace %s", name, ex, traceID)
		}
	}
}

func TestDeltaTemporality(t *testing.T) {
	m := kafkatrace.NewMetrics()
	_, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	process := func(n int) {
		for range n {
			in := consumed(&kgo.Record{Topic: "req"})
			ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
			wk.EndProcess(ctx, in, qw.End, span, nil, "")
		}
	}
	reader := newReader(t, m, tracing.WithTemporality(metricdata.DeltaTemporality))
	process(3)
	first := reader()
	process(2)
	second := reader()
	third := reader()
	count := func(got map[string]metricdata.Aggregation) (consumedN int64, pathwayN uint64) {
		if s, ok := got["messaging.client.consumed.messages"].(metricdata.Sum[int64]); ok {
			if s.Temporality != metricdata.DeltaTemporality {
				t.Error("counter not delta")
			}
			for _, dp := range s.DataPoints {
				consumedN += dp.Value
			}
		}
		if h, ok := got[otelnames.MetricPathwayLatency].(metricdata.ExponentialHistogram[float64]); ok {
			for _, dp := range h.DataPoints {
				if v, _ := dp.Attributes.Value(otelnames.PathwayMeasure); v.AsString() == otelnames.MeasureEdge {
					pathwayN += dp.Count
				}
			}
		}
		return
	}
	for i, c := range []struct {
		got  map[string]metricdata.Aggregation
		want int
	}{{first, 3}, {second, 2}, {third, 0}} {
		consumedN, pathwayN := count(c.got)
		if consumedN != int64(c.want) || pathwayN != uint64(c.want) {
			t.Errorf("collection %d: %d consumed, %d pathway samples; want %d each", i+1, consumedN, pathwayN, c.want)
		}
	}
}

func TestExplicitPathwayBuckets(t *testing.T) {
	m := kafkatrace.NewMetrics()
	_, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	now := time.Now()
	hdr := pathway.Context{Hash: 7, Origin: now.Add(-40 * time.Millisecond).UnixNano(), Prev: now.Add(-40 * time.Millisecond).UnixNano()}
	in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: hdr.Append(nil)}}})
	ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
	wk.EndProcess(ctx, in, qw.End, span, nil, "")
	h, ok := collect(t, m, tracing.WithExplicitPathwayBuckets())[otelnames.MetricPathwayLatency].(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 2 {
		t.Fatalf("explicit histogram expected, got %+v", h)
	}
	for _, dp := range h.DataPoints {
		// 40 ms falls in (0.025, 0.05].
		i := 0
		for i < len(dp.Bounds) && dp.Bounds[i] < 0.04 {
			i++
		}
		if dp.BucketCounts[i] != 1 || dp.Count != 1 {
			t.Errorf("%v: bounds %v counts %v", dp.Attributes.ToSlice(), dp.Bounds, dp.BucketCounts)
		}
	}
}

// newReader returns a function collecting m through one SDK reader, as
// a periodic exporter does at every interval.
func newReader(t *testing.T, m *kafkatrace.Metrics, opts ...tracing.ProducerOption) func() map[string]metricdata.Aggregation {
	t.Helper()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(tracing.NewMetricsProducer(m, opts...)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return func() map[string]metricdata.Aggregation {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		out := map[string]metricdata.Aggregation{}
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				out[mt.Name] = mt.Data
			}
		}
		return out
	}
}

func testPropagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// pathwayTracers returns a gateway's and a worker's Tracers recording
// pathways into m, sampled by sampler.
func pathwayTracers(t *testing.T, m *kafkatrace.Metrics, sampler sdktrace.Sampler) (gateway, worker *kafkatrace.Tracer) {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts := []kafkatrace.Option{kafkatrace.WithTracerProvider(tp), kafkatrace.WithPropagator(testPropagator()), kafkatrace.WithMetrics(m), kafkatrace.WithParentBasedSampling()}
	gateway = kafkatrace.New(append(opts, kafkatrace.WithPathways("gw"))...)
	worker = kafkatrace.New(append(opts, kafkatrace.WithPathways("wk"), kafkatrace.WithConsumerGroup("g"))...)
	return gateway, worker
}

// produce runs r through tr's produce hooks, as franz-go does.
func produce(tr *kafkatrace.Tracer, r *kgo.Record) {
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, nil)
}

// consumed returns r as a consumer fetches it.
func consumed(r *kgo.Record) *kgo.Record {
	return &kgo.Record{Topic: r.Topic, Partition: r.Partition, Value: r.Value, Headers: r.Headers, Timestamp: time.Now()}
}
