package kafkatrace

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/telemetry"
)

// collect reads m through a real SDK reader, as an exporter would.
func collect(t *testing.T, m *Metrics) map[string]metricdata.Aggregation {
	t.Helper()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(m))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
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
	return v.Emit()
}

func TestMetricsProducedThroughSDKReader(t *testing.T) {
	m := NewMetrics()
	producer := New(WithPropagator(testPropagator()), WithMetrics(m))
	worker := New(WithPropagator(testPropagator()), WithMetrics(m), WithConsumerGroup("g"))

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
		bySeries[p.Emit()+"/"+e.Emit()] = dp.Value
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
	qw := got[telemetry.MetricQueueWait].(metricdata.Histogram[float64])
	if len(qw.DataPoints) != 1 || qw.DataPoints[0].Count != 4 {
		t.Fatalf("queue wait %+v", qw.DataPoints)
	}
	if min, _ := qw.DataPoints[0].Min.Value(); min < 2 || qw.DataPoints[0].Sum < 8 {
		t.Fatalf("queue wait min %v sum %v, want ≥ 2 s each", min, qw.DataPoints[0].Sum)
	}
}

func TestMetricsEmptyProducesNothing(t *testing.T) {
	if got := collect(t, NewMetrics()); len(got) != 0 {
		t.Fatalf("empty Metrics produced %v", got)
	}
}

func TestNoMetricsWithoutOption(t *testing.T) {
	tr := New(WithPropagator(testPropagator()))
	r := &kgo.Record{Topic: "t"}
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, nil) // must not panic without Metrics
	ctx, span, qw := tr.StartProcess(context.Background(), r, -1)
	tr.EndProcess(ctx, r, qw.End, span, nil, "")
}

func attributeKey(k string) attribute.Key { return attribute.Key(k) }
