// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// TestBucketIndexMatchesDefinition checks BucketIndex against the
// OpenTelemetry definition, at and around exact bucket boundaries.
func TestBucketIndexMatchesDefinition(t *testing.T) {
	for i := minIndex + 1; i < maxIndex; i++ {
		upper := math.Exp2(float64(i+1) / perOctave) // seconds, inclusive upper bound of i
		d := time.Duration(upper * float64(time.Second))
		// Durations are whole nanoseconds: the boundary itself may round
		// either side, so check a nanosecond away from it where it is
		// representable.
		if float64(d)/1e9 < upper {
			if got := BucketIndex(d); got != i {
				t.Fatalf("BucketIndex(%v) = %d, want %d", d, got, i)
			}
		}
		if got := BucketIndex(d + 2); got != i+1 && float64(d+2)/1e9 > upper {
			t.Fatalf("BucketIndex(%v) = %d, want %d", d+2, got, i+1)
		}
	}
	// Exact powers of two are the inclusive upper bound of the bucket
	// below.
	if got := BucketIndex(time.Second); got != -1 {
		t.Errorf("BucketIndex(1s) = %d, want -1", got)
	}
	if got := BucketIndex(2 * time.Second); got != perOctave-1 {
		t.Errorf("BucketIndex(2s) = %d, want %d", got, perOctave-1)
	}
	if BucketIndex(1) != minIndex || BucketIndex(1000*time.Hour) != maxIndex {
		t.Error("out-of-range values are not clamped")
	}
}

// TestQuantileWithinBucketError compares Quantile with exact order
// statistics over spread-out random durations.
func TestQuantileWithinBucketError(t *testing.T) {
	var h Histogram
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]time.Duration, 20000)
	for i := range vals {
		// log-uniform from 10 µs to 10 s
		vals[i] = time.Duration(math.Exp(math.Log(1e4)+rng.Float64()*math.Log(1e6))) * time.Nanosecond
		h.Record(vals[i], trace.SpanContext{}, 1)
	}
	slices.Sort(vals)
	s := h.Snapshot()
	if s.Count != uint64(len(vals)) {
		t.Fatalf("count %d", s.Count)
	}
	var sum time.Duration
	for _, v := range vals {
		sum += v
	}
	if s.Sum != sum {
		t.Fatalf("sum %v, want %v", s.Sum, sum)
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.95, 0.99, 0.999} {
		exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
		got := s.Quantile(q)
		if rel := math.Abs(float64(got-exact)) / float64(exact); rel > 0.022 {
			t.Errorf("q%.3f: %v, exact %v (%.1f%% off)", q, got, exact, 100*rel)
		}
	}
}

func TestZerosSubMerge(t *testing.T) {
	var h Histogram
	h.Record(0, trace.SpanContext{}, 1)
	h.Record(-time.Second, trace.SpanContext{}, 1)
	h.Record(time.Millisecond, trace.SpanContext{}, 1)
	first := h.Snapshot()
	if first.Count != 3 || first.ZeroCount != 2 || first.Quantile(0.5) != 0 {
		t.Fatalf("snapshot %+v", first)
	}
	h.Record(time.Second, trace.SpanContext{}, 2)
	h.Record(time.Millisecond, trace.SpanContext{}, 2)
	second := h.Snapshot()
	d := second.Sub(first)
	if d.Count != 2 || d.ZeroCount != 0 || d.Sum != time.Second+time.Millisecond {
		t.Fatalf("delta %+v", d)
	}
	if d.Buckets[0] != 1 || d.Buckets[len(d.Buckets)-1] != 1 {
		t.Fatalf("delta buckets trimmed wrongly: offset %d %v", d.Offset, d.Buckets)
	}
	var m Snapshot
	m.Merge(first)
	m.Merge(d)
	if m.Count != second.Count || m.Sum != second.Sum || m.Quantile(0.99) != second.Quantile(0.99) || m.Quantile(0.5) != second.Quantile(0.5) {
		t.Fatalf("merge %+v, want %+v", m, second)
	}
}

func TestExemplarsOnlyFromSampledRecordsOnePerOctave(t *testing.T) {
	var h Histogram
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{3}, SpanID: trace.SpanID{4}})
	h.Record(time.Millisecond, unsampled, 10)
	if s := h.Snapshot(); len(s.Exemplars) != 0 {
		t.Fatalf("unsampled record kept as exemplar: %+v", s.Exemplars)
	}
	h.Record(time.Millisecond, sampled, 11)
	h.Record(time.Millisecond+time.Microsecond, sampled, 12) // same octave: replaces
	h.Record(3*time.Second, sampled, 13)                     // the tail gets its own
	s := h.Snapshot()
	if len(s.Exemplars) != 2 {
		t.Fatalf("exemplars %+v", s.Exemplars)
	}
	if s.Exemplars[0].Time != 12 || s.Exemplars[1].Value != 3*time.Second || s.Exemplars[1].TraceID != sampled.TraceID() || s.Exemplars[1].SpanID != sampled.SpanID() {
		t.Fatalf("exemplars %+v", s.Exemplars)
	}
}

func TestRecordIsAllocationFreeAndConcurrent(t *testing.T) {
	var h Histogram
	if n := testing.AllocsPerRun(1000, func() { h.Record(time.Millisecond, trace.SpanContext{}, 1) }); n != 0 {
		t.Fatalf("Record allocates %v times", n)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				h.Record(time.Duration(g*1000+i+1)*time.Microsecond, trace.SpanContext{}, 1)
			}
		})
	}
	wg.Wait()
	if s := h.Snapshot(); s.Count != 8000+1001 {
		t.Fatalf("count %d", s.Count)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(time.Duration(1000+i%100000)*time.Microsecond, trace.SpanContext{}, 1)
	}
}

// TestBucketIndexMatchesLog compares the table-driven BucketIndex with the
// definition computed with math.Log2, over random durations.
func TestBucketIndexMatchesLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		d := time.Duration(math.Exp(rng.Float64() * math.Log(float64(time.Hour))))
		if d <= 0 {
			continue
		}
		want := min(max(int(math.Ceil(math.Log2(d.Seconds())*perOctave))-1, minIndex), maxIndex)
		if got := BucketIndex(d); got != want {
			// Only a value within rounding of a boundary may differ.
			lower := math.Exp2(float64(max(got, want)) / perOctave)
			if math.Abs(d.Seconds()-lower)/lower > 1e-12 {
				t.Fatalf("BucketIndex(%v) = %d, want %d", d, got, want)
			}
		}
	}
}

func BenchmarkBucketIndex(b *testing.B) {
	var sink int
	for i := 0; b.Loop(); i++ {
		sink += BucketIndex(time.Duration(1000 + i%100000000))
	}
	_ = sink
}

// TestSubAfterReset: a snapshot of a histogram made anew (a pathway
// series evicted and recreated) is all new measurements, not a negative
// difference.
func TestSubAfterReset(t *testing.T) {
	var old, anew Histogram
	for range 5 {
		old.Record(time.Millisecond, trace.SpanContext{}, 0)
	}
	anew.Record(time.Second, trace.SpanContext{}, 0)
	d := anew.Snapshot().Sub(old.Snapshot())
	if d.Count != 1 || d.Sum != time.Second || d.Quantile(0.5) < 900*time.Millisecond {
		t.Errorf("difference %+v, want the one new measurement", d)
	}
}
