// SPDX-License-Identifier: Apache-2.0

package backoff_test

import (
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/internal/backoff"
)

func TestDoubling(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		first, max time.Duration
		n          int
		want       time.Duration
	}{
		{100 * ms, 2 * time.Second, -3, 100 * ms},
		{100 * ms, 2 * time.Second, 0, 100 * ms},
		{100 * ms, 2 * time.Second, 1, 200 * ms},
		{100 * ms, 2 * time.Second, 4, 1600 * ms},
		{100 * ms, 2 * time.Second, 5, 2 * time.Second},
		{100 * ms, 2 * time.Second, 1 << 30, 2 * time.Second},
		{3 * time.Second, 2 * time.Second, 0, 2 * time.Second},
		{time.Duration(1) << 62, time.Duration(1<<63 - 1), 10, time.Duration(1<<63 - 1)},
	} {
		if got := backoff.Doubling(c.first, c.max, c.n); got != c.want {
			t.Errorf("Doubling(%v, %v, %d) = %v, want %v", c.first, c.max, c.n, got, c.want)
		}
	}
}

// spread draws n values of f and checks they lie within [lo, hi], reach
// within 5% of the range of both ends, and are spread: at least half of
// them distinct and their mean within 5% of the range of the middle.
func spread(t *testing.T, name string, lo, hi time.Duration, f func() time.Duration) {
	t.Helper()
	const n = 10000
	seen := map[time.Duration]bool{}
	least, most, sum := hi, lo, 0.0
	for range n {
		d := f()
		if d < lo || d > hi {
			t.Fatalf("%s = %v, outside [%v, %v]", name, d, lo, hi)
		}
		seen[d] = true
		least, most, sum = min(least, d), max(most, d), sum+float64(d)
	}
	width := float64(hi - lo)
	if float64(least-lo) > 0.05*width || float64(hi-most) > 0.05*width {
		t.Errorf("%s: %d draws within [%v, %v] of [%v, %v]: not spread over the range", name, n, least, most, lo, hi)
	}
	if mean, mid := sum/n, float64(lo+hi)/2; mean < mid-0.05*width || mean > mid+0.05*width {
		t.Errorf("%s: mean %v, want about %v (uniform)", name, time.Duration(mean), time.Duration(mid))
	}
	if len(seen) < n/2 {
		t.Errorf("%s: %d distinct values in %d draws", name, len(seen), n)
	}
}

// TestEqualJitterSpread: Equal(d) is uniform over [d/2, d].
func TestEqualJitterSpread(t *testing.T) {
	for _, d := range []time.Duration{100 * time.Millisecond, 2 * time.Second, 10 * time.Second} {
		spread(t, "Equal("+d.String()+")", d/2, d, func() time.Duration { return backoff.Equal(d) })
	}
	if got := backoff.Equal(0); got != 0 {
		t.Errorf("Equal(0) = %v", got)
	}
}

// TestProportionalJitterSpread: Proportional(d, 0.2) is uniform over
// [0.8d, 1.2d].
func TestProportionalJitterSpread(t *testing.T) {
	d := time.Second
	spread(t, "Proportional(1s, 0.2)", d*8/10, d*12/10, func() time.Duration { return backoff.Proportional(d, 0.2) })
}
