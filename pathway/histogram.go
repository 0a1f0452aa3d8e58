// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Scale is the exponential histograms' scale in the OpenTelemetry sense:
// bucket i holds values in (2^(i/16), 2^((i+1)/16)] seconds, so a bucket is
// 4.4% wide and a quantile read off its geometric middle is within 2.2% of
// the exact one.
const Scale = 4

const (
	perOctave = 1 << Scale
	// minIndex and maxIndex bound the buckets: from about 0.48 µs
	// (2^-21 s) to about 68 minutes (2^12 s). Values outside go into the
	// first or last bucket; zeros into the zero count.
	minIndex = -21 * perOctave
	maxIndex = 12*perOctave - 1
	nBuckets = maxIndex - minIndex + 1
	nOctaves = nBuckets / perOctave
)

// BucketIndex returns the index, at Scale, of the bucket holding d: the i
// with 2^(i/16) < d/1s ≤ 2^((i+1)/16), clamped to the histograms' range.
// d must be positive.
func BucketIndex(d time.Duration) int {
	// d = 1.m × 2^e seconds: bucket e×16 + k − 1 where k is the number of
	// the octave's 16 boundaries 2^(j/16), j = 1..16, below which 1.m
	// does not lie, found by binary search over their mantissas. Equal to
	// ⌈16·log2(d/1s)⌉ − 1 (TestBucketIndexMatchesLog), about 4 times faster
	// than math.Log2 (BenchmarkBucketIndex).
	bits := math.Float64bits(d.Seconds())
	e := int(bits>>52&0x7ff) - 1023
	m := bits & (1<<52 - 1)
	var i int
	if m == 0 { // an exact power of two: the upper bound of the bucket below
		i = e*perOctave - 1
	} else {
		lo, hi := 0, perOctave-1 // the smallest j with m <= boundaryMantissa[j]
		for lo < hi {
			mid := (lo + hi) / 2
			if m <= boundaryMantissa[mid] {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		i = e*perOctave + lo
	}
	return min(max(i, minIndex), maxIndex)
}

// boundaryMantissa[j] is the mantissa of 2^((j+1)/16), j = 0..14, and
// above every mantissa for j = 15 (2^(16/16) = 2 has mantissa 0 in the
// next octave).
var boundaryMantissa = func() [perOctave]uint64 {
	var b [perOctave]uint64
	for j := range perOctave - 1 {
		b[j] = math.Float64bits(math.Exp2(float64(j+1)/perOctave)) & (1<<52 - 1)
	}
	b[perOctave-1] = 1 << 52
	return b
}()

// BucketMiddle returns the geometric middle of bucket i at Scale.
func BucketMiddle(i int) time.Duration {
	return time.Duration(math.Exp2((float64(i)+0.5)/perOctave) * float64(time.Second))
}

// Exemplar is one recorded measurement of a sampled record, with its trace.
type Exemplar struct {
	// Value is the measurement.
	Value time.Duration
	// Time is when it was recorded, in Unix nanoseconds.
	Time    int64
	TraceID trace.TraceID
	SpanID  trace.SpanID
}

// Histogram is a base-2 exponential histogram of durations, at Scale,
// updated with two atomic additions per measurement: safe for concurrent
// use and free of allocation. It keeps the last exemplar of a sampled
// record per power of two (zeros with the smallest), so that every part of the distribution, the
// tail included, links to a trace. The zero value is ready to use.
type Histogram struct {
	counts [nBuckets]atomic.Uint64
	zeros  atomic.Uint64
	sum    atomic.Int64 // nanoseconds

	exMu      sync.Mutex
	exemplars [nOctaves]Exemplar // zero Time: none
}

// Record adds d (a negative d counts as 0). When sc is sampled, the
// measurement also becomes the exemplar of its power of two, recorded at
// now (Unix nanoseconds).
func (h *Histogram) Record(d time.Duration, sc trace.SpanContext, now int64) {
	i := 0 // zeros share the first power of two's exemplar
	if d <= 0 {
		d = 0
		h.zeros.Add(1)
	} else {
		i = BucketIndex(d) - minIndex
		h.counts[i].Add(1)
		h.sum.Add(int64(d))
	}
	if sc.IsSampled() {
		h.exMu.Lock()
		h.exemplars[i/perOctave] = Exemplar{Value: d, Time: now, TraceID: sc.TraceID(), SpanID: sc.SpanID()}
		h.exMu.Unlock()
	}
}

// Snapshot is a Histogram's state at one moment, or the difference of two
// such states.
type Snapshot struct {
	// Count is the number of measurements, ZeroCount included.
	Count uint64 `json:"count"`
	// Sum is their total.
	Sum time.Duration `json:"sum_ns"`
	// ZeroCount counts measurements of 0.
	ZeroCount uint64 `json:"zero_count,omitempty"`
	// Offset is the bucket index, at Scale, of Buckets[0].
	Offset int `json:"offset"`
	// Buckets are the counts of consecutive buckets, without leading or
	// trailing empty ones.
	Buckets []uint64 `json:"buckets,omitempty"`
	// Exemplars are the histogram's exemplars at the time of the
	// snapshot, the oldest first.
	Exemplars []Exemplar `json:"-"`
}

// Snapshot returns the histogram's current state. Measurements recorded
// while it runs may be partly visible (a bucket counted before the sum);
// the next snapshot includes them fully.
func (h *Histogram) Snapshot() Snapshot {
	var s Snapshot
	first, last := -1, -1
	var counts [nBuckets]uint64
	for i := range h.counts {
		c := h.counts[i].Load()
		counts[i] = c
		if c != 0 {
			if first < 0 {
				first = i
			}
			last = i
			s.Count += c
		}
	}
	s.ZeroCount = h.zeros.Load()
	s.Count += s.ZeroCount
	s.Sum = time.Duration(h.sum.Load())
	if first >= 0 {
		s.Offset = first + minIndex
		s.Buckets = append([]uint64(nil), counts[first:last+1]...)
	}
	h.exMu.Lock()
	for _, e := range h.exemplars {
		if e.Time != 0 {
			s.Exemplars = append(s.Exemplars, e)
		}
	}
	h.exMu.Unlock()
	for i := 1; i < len(s.Exemplars); i++ { // a handful: insertion sort by time
		for j := i; j > 0 && s.Exemplars[j].Time < s.Exemplars[j-1].Time; j-- {
			s.Exemplars[j], s.Exemplars[j-1] = s.Exemplars[j-1], s.Exemplars[j]
		}
	}
	return s
}

// resetSince reports whether prev holds more than s in some count: s is
// not a later snapshot of the same histogram.
func (s Snapshot) resetSince(prev Snapshot) bool {
	if prev.Count > s.Count || prev.ZeroCount > s.ZeroCount || prev.Sum > s.Sum {
		return true
	}
	for i, c := range prev.Buckets {
		if c > s.bucket(prev.Offset+i) {
			return true
		}
	}
	return false
}

// bucket returns the count of the bucket with index i.
func (s Snapshot) bucket(i int) uint64 {
	if i < s.Offset || i >= s.Offset+len(s.Buckets) {
		return 0
	}
	return s.Buckets[i-s.Offset]
}

// Sub returns s minus an earlier snapshot prev of the same histogram: the
// measurements recorded between the two. Exemplars are those of s recorded
// after prev's newest. When prev holds more than s in any count (the
// histogram was reset: a series evicted and made anew), the measurements
// since are s itself, as a counter reset is read.
func (s Snapshot) Sub(prev Snapshot) Snapshot {
	if s.resetSince(prev) {
		prev = Snapshot{}
	}
	d := Snapshot{ZeroCount: s.ZeroCount - prev.ZeroCount, Sum: s.Sum - prev.Sum}
	d.Count = d.ZeroCount
	first, last := 0, -1
	var counts []uint64
	for i := s.Offset; i < s.Offset+len(s.Buckets); i++ {
		c := s.bucket(i) - prev.bucket(i)
		counts = append(counts, c)
		d.Count += c
		if c != 0 {
			if last < 0 {
				first = len(counts) - 1
			}
			last = len(counts) - 1
		}
	}
	if last >= 0 {
		d.Offset = s.Offset + first
		d.Buckets = counts[first : last+1]
	}
	var newest int64
	for _, e := range prev.Exemplars {
		newest = max(newest, e.Time)
	}
	for _, e := range s.Exemplars {
		if e.Time > newest {
			d.Exemplars = append(d.Exemplars, e)
		}
	}
	return d
}

// Merge adds o's measurements to s (exemplars included).
func (s *Snapshot) Merge(o Snapshot) {
	s.Count += o.Count
	s.Sum += o.Sum
	s.ZeroCount += o.ZeroCount
	s.Exemplars = append(s.Exemplars, o.Exemplars...)
	if len(o.Buckets) == 0 {
		return
	}
	if len(s.Buckets) == 0 {
		s.Offset, s.Buckets = o.Offset, append([]uint64(nil), o.Buckets...)
		return
	}
	lo := min(s.Offset, o.Offset)
	hi := max(s.Offset+len(s.Buckets), o.Offset+len(o.Buckets))
	merged := make([]uint64, hi-lo)
	for i := range merged {
		merged[i] = s.bucket(lo+i) + o.bucket(lo+i)
	}
	s.Offset, s.Buckets = lo, merged
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of the measurements: the
// geometric middle of the bucket that holds it, within 2.2% of the exact
// value (0 when it falls among the zeros, or there are none).
func (s Snapshot) Quantile(q float64) time.Duration {
	if s.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(s.Count)))
	rank = min(max(rank, 1), s.Count)
	seen := s.ZeroCount
	if rank <= seen {
		return 0
	}
	for i, c := range s.Buckets {
		seen += c
		if seen >= rank {
			return BucketMiddle(s.Offset + i)
		}
	}
	return BucketMiddle(s.Offset + len(s.Buckets) - 1)
}
