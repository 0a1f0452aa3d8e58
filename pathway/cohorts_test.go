// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"sync"
	"testing"
	"time"
)

// TestCohortsCountEveryRecordByOriginBin records from several goroutines
// at once, over more bins than the ring has slots (so slots are taken
// over and bins spilled) and with origins older than the horizon, and
// checks every record is counted once, in its bin or in Older.
func TestCohortsCountEveryRecordByOriginBin(t *testing.T) {
	var c Cohorts
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC).UnixNano()
	const bins = 3 * cohortSlots
	want := map[int64]uint64{}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for b := range bins {
				// Each goroutine walks the bins forward, and every 7th
				// record goes back 200 bins (a slow request finishing).
				for k := range 3 {
					o := start + int64(b)*cohortWidthNs + int64(k+g)*int64(time.Millisecond)
					if (b+k+g)%7 == 0 && b >= 200 {
						o -= 200 * cohortWidthNs
					}
					c.Record(o)
				}
			}
		})
	}
	wg.Wait()
	for g := range 4 {
		for b := range bins {
			for k := range 3 {
				bin := int64(b)
				if (b+k+g)%7 == 0 && b >= 200 {
					bin -= 200
				}
				want[bin]++
			}
		}
	}
	now := start + int64(bins)*cohortWidthNs
	got := c.Counts(now)
	startBin := start / cohortWidthNs
	since := now/cohortWidthNs - int64(CohortHorizon/CohortWidth)
	if got.Since != since*5 {
		t.Fatalf("Since = %d, want %d", got.Since, since*5)
	}
	var wantOlder uint64
	for b, n := range want {
		if startBin+b < since {
			wantOlder += n
		}
	}
	if got.Older != wantOlder {
		t.Errorf("Older = %d, want %d", got.Older, wantOlder)
	}
	seen := 0
	for _, cc := range got.Bins {
		b := cc.Bin/5 - startBin
		if cc.Count != want[b] {
			t.Errorf("bin %d: %d, want %d", b, cc.Count, want[b])
		}
		seen++
	}
	wantBins := 0
	for b := range want {
		if startBin+b >= since {
			wantBins++
		}
	}
	if seen != wantBins {
		t.Errorf("%d bins, want %d", seen, wantBins)
	}
	// Counting again changes nothing (Counts folds what left the horizon
	// into Older once).
	if again := c.Counts(now); again.Older != got.Older || len(again.Bins) != len(got.Bins) {
		t.Errorf("second Counts: older %d bins %d, first: older %d bins %d", again.Older, len(again.Bins), got.Older, len(got.Bins))
	}
}

// TestCohortsBinsAreAligned: a bin starts at a multiple of CohortWidth,
// negative times included.
func TestCohortsBinsAreAligned(t *testing.T) {
	var c Cohorts
	at := time.Date(2026, 11, 28, 10, 0, 7, 0, time.UTC)
	c.Record(at.UnixNano())
	c.Record(at.Add(-2 * time.Second).UnixNano()) // 10:00:05, same bin
	c.Record(at.Add(-3 * time.Second).UnixNano()) // 10:00:04, the bin before
	got := c.Counts(at.UnixNano()).Bins
	if len(got) != 2 || got[0].Bin != at.Unix()-7 || got[0].Count != 1 || got[1].Bin != at.Unix()-2 || got[1].Count != 2 {
		t.Errorf("bins %+v", got)
	}
	if floorDiv(-1, 5) != -1 || floorMod(-1, 5) != 4 {
		t.Error("floorDiv/floorMod of negatives")
	}
}

// TestCohortsRecordDoesNotAllocate: the hot path (a bin already in its
// slot) allocates nothing.
func TestCohortsRecordDoesNotAllocate(t *testing.T) {
	var c Cohorts
	now := time.Now().UnixNano()
	c.Record(now)
	if n := testing.AllocsPerRun(1000, func() { c.Record(now) }); n != 0 {
		t.Errorf("%v allocations per Record", n)
	}
}

// BenchmarkCohortsRecord is the per-record cost of origin-time counting
// at a checkpoint (issue 26's bound: 50 ns, 0 allocations), from one
// goroutine and from every P at once on the same bins (the partitions of
// one checkpoint counting the same cohort).
func BenchmarkCohortsRecord(b *testing.B) {
	now := time.Now().UnixNano()
	b.Run("serial", func(b *testing.B) {
		var c Cohorts
		b.ReportAllocs()
		i := int64(0)
		for b.Loop() {
			i += int64(time.Millisecond) // a bin every 5000 records
			c.Record(now + i)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var c Cohorts
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := int64(0)
			for pb.Next() {
				i += int64(time.Millisecond)
				c.Record(now + i)
			}
		})
	})
}
