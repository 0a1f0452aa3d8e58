// SPDX-License-Identifier: Apache-2.0

package lag_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/otelnames"
)

// TestMeasureReaderLag: a reader without a group, at offset 7 of
// partition 0, below the log start of partition 1 and with no offset on
// partition 2, lags by what it has yet to read of each, in records and
// in the age of the first of them; a reader at the ends lags by nothing.
func TestMeasureReaderLag(t *testing.T) {
	f := newFixture(t)
	r := lag.Reader{Name: "retrieval", Topic: testTopic, Offsets: func() map[int32]int64 { return map[int32]int64{0: 7, 1: 1} }}
	before := time.Now()
	got, err := lag.MeasureReader(t.Context(), f.opts, r)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	wants := []want{
		{"retrieval", 0, 7, 10, 3, 7},
		{"retrieval", 1, 1, 6, 4, 2}, // offset 1 is gone: from the log start, 2
		{"retrieval", 2, -1, 4, 4, 0},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		f.checkEntry(t, got[i], w, before, after)
	}

	caughtUp := lag.Reader{Name: "enrichment", Topic: testTopic, Offsets: func() map[int32]int64 { return map[int32]int64{0: 10, 1: 6, 2: 4} }}
	got, err = lag.MeasureReader(t.Context(), f.opts, caughtUp)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []want{{"enrichment", 0, 10, 10, 0, -1}, {"enrichment", 1, 6, 6, 0, -1}, {"enrichment", 2, 4, 4, 0, -1}} {
		f.checkEntry(t, got[i], w, before, time.Now())
	}

	// A topic not created yet has no partitions: nothing lags.
	got, err = lag.MeasureReader(t.Context(), f.opts, lag.Reader{Name: "x", Topic: "not.yet", Offsets: func() map[int32]int64 { return nil }})
	if err != nil || len(got) != 0 {
		t.Errorf("a topic that does not exist: %+v, %v; want no entries and no error", got, err)
	}
	if _, err := lag.MeasureReader(t.Context(), f.opts, lag.Reader{Topic: testTopic}); err == nil ||
		!strings.Contains(err.Error(), "name is empty") || !strings.Contains(err.Error(), "no offsets function") {
		t.Errorf("a reader without name and offsets: %v", err)
	}
}

// TestReaderMonitorExportsIndexLagGauges: a reader's Monitor exports
// kretrieve.index.lag and kretrieve.index.lag.seconds per partition, by
// kretrieve.index.name rather than a consumer group, and measures the
// reader's offsets as they are at each measurement.
func TestReaderMonitorExportsIndexLagGauges(t *testing.T) {
	f := newFixture(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	next := map[int32]int64{0: 7, 1: 6, 2: 4}
	m, err := lag.NewReaderMonitor(f.opts, lag.Reader{Name: "retrieval", Topic: testTopic, Offsets: func() map[int32]int64 { return next }},
		lag.MonitorConfig{Interval: time.Hour}, lag.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	records, seconds := indexGauges(t, reader)
	wantAttrs := attribute.NewSet(
		attribute.String("messaging.system", "kafka"),
		attribute.String("messaging.destination.name", testTopic),
		attribute.String("messaging.destination.partition.id", "0"),
		attribute.String("kretrieve.index.name", "retrieval"),
	)
	if p := records["0"]; p.value != 3 || !p.attrs.Equals(&wantAttrs) {
		t.Errorf("%s of partition 0 = %d %v, want 3 with %v", otelnames.MetricIndexLagRecords, p.value, p.attrs.Encoded(attribute.DefaultEncoder()), wantAttrs.Encoded(attribute.DefaultEncoder()))
	}
	if age := time.Since(f.at(7)).Seconds(); seconds["0"].value < age-5 || seconds["0"].value > age {
		t.Errorf("%s of partition 0 = %.3f, want about %.3f", otelnames.MetricIndexLagSeconds, seconds["0"].value, age)
	}
	if records["1"].value != 0 || records["2"].value != 0 || seconds["1"].value != 0 {
		t.Errorf("caught-up partitions: %v %v, want 0", records, seconds)
	}

	next = map[int32]int64{0: 10, 1: 6, 2: 4}
	if _, err := m.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Second, func() bool { r, _ := indexGauges(t, reader); return r["0"].value == 0 }, "partition 0's lag after the reader caught up")

	if _, err := lag.NewReaderMonitor(f.opts, lag.Reader{Name: "r", Topic: testTopic, Offsets: func() map[int32]int64 { return nil }},
		lag.MonitorConfig{Groups: []string{"g"}}); err == nil {
		t.Error("a reader's monitor with groups: no error")
	}
}

// indexGauges returns the index lag gauges' data points by partition.
func indexGauges(t *testing.T, r sdkmetric.Reader) (map[string]point[int64], map[string]point[float64]) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	records, seconds := map[string]point[int64]{}, map[string]point[float64]{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				if m.Name != otelnames.MetricIndexLagRecords || m.Unit != "{message}" {
					t.Fatalf("metric %s (%s)", m.Name, m.Unit)
				}
				for _, dp := range d.DataPoints {
					p, _ := dp.Attributes.Value("messaging.destination.partition.id")
					records[p.AsString()] = point[int64]{dp.Value, dp.Attributes}
				}
			case metricdata.Gauge[float64]:
				if m.Name != otelnames.MetricIndexLagSeconds || m.Unit != "s" {
					t.Fatalf("metric %s (%s)", m.Name, m.Unit)
				}
				for _, dp := range d.DataPoints {
					p, _ := dp.Attributes.Value("messaging.destination.partition.id")
					seconds[p.AsString()] = point[float64]{dp.Value, dp.Attributes}
				}
			default:
				t.Fatalf("metric %s is a %T", m.Name, m.Data)
			}
		}
	}
	return records, seconds
}

// TestMeasureReadersAtOnce: readers of one topic at different offsets of
// the same partition are measured together, each its own entries in the
// order given, each with the age of its own oldest record.
func TestMeasureReadersAtOnce(t *testing.T) {
	f := newFixture(t)
	a := lag.Reader{Name: "retrieval@a", Topic: testTopic, Offsets: func() map[int32]int64 { return map[int32]int64{0: 3, 1: 6, 2: 4} }}
	b := lag.Reader{Name: "retrieval@b", Topic: testTopic, Offsets: func() map[int32]int64 { return map[int32]int64{0: 8, 1: 6, 2: 1} }}
	before := time.Now()
	got, err := lag.MeasureReaders(t.Context(), f.opts, a, b)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	wants := []want{
		{"retrieval@a", 0, 3, 10, 7, 3},
		{"retrieval@a", 1, 6, 6, 0, -1},
		{"retrieval@a", 2, 4, 4, 0, -1},
		{"retrieval@b", 0, 8, 10, 2, 8},
		{"retrieval@b", 1, 6, 6, 0, -1},
		{"retrieval@b", 2, 1, 4, 3, 1},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		f.checkEntry(t, got[i], w, before, after)
	}
	if got, err := lag.MeasureReaders(t.Context(), f.opts); got != nil || err != nil {
		t.Errorf("no readers: %v, %v", got, err)
	}
}

func TestSum(t *testing.T) {
	boom := fmt.Errorf("boom")
	tests := []struct {
		name    string
		parts   []lag.PartitionLag
		records int64
		seconds float64
		err     string
	}{
		{"none", nil, -1, -1, ""},
		{"records add, the oldest age wins", []lag.PartitionLag{{Records: 3, Seconds: 2}, {Records: 0}, {Records: 4, Seconds: 7.5}}, 7, 7.5, ""},
		{"one unknown age", []lag.PartitionLag{{Records: 3, Seconds: 2}, {Partition: 1, Records: 1, Seconds: -1, Err: boom}}, 4, -1, "partition 1: boom"},
		{"one unknown count", []lag.PartitionLag{{Partition: 2, Records: -1, Seconds: -1, Err: boom}, {Records: 5, Seconds: 1}}, -1, -1, "partition 2: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			records, seconds, err := lag.Sum(tt.parts)
			if records != tt.records || seconds != tt.seconds || fmt.Sprint(err) != map[bool]string{true: "<nil>", false: tt.err}[tt.err == ""] {
				t.Errorf("Sum = %d, %v, %v; want %d, %v, %q", records, seconds, err, tt.records, tt.seconds, tt.err)
			}
		})
	}
}

// TestConcurrentMeasurementsShareOptions: measurements made at once from
// one set of options, compression included (as kafkaclient.Options sets
// it), do not race (run with -race: kgo.NewClient rewrote the shared codec
// list, a race a follower's two measurements hit in CI).
func TestConcurrentMeasurementsShareOptions(t *testing.T) {
	f := newFixture(t)
	opts := append(f.opts, kgo.ProducerBatchCompression(kgo.ZstdCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()))
	r := lag.Reader{Name: "retrieval", Topic: testTopic, Offsets: func() map[int32]int64 { return map[int32]int64{0: 10, 1: 6, 2: 4} }}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := lag.MeasureReader(t.Context(), opts, r); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
