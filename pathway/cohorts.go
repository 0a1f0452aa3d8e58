// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// CohortWidth is the width of an origin-time bin: Cohorts counts records
// by the CohortWidth-aligned interval their pathway's origin fell in.
const CohortWidth = 5 * time.Second

// CohortHorizon is how far back Cohorts keeps bins one by one: older
// bins are folded into one count (CohortCounts.Older).
const CohortHorizon = 10 * time.Minute

const (
	cohortWidthNs = int64(CohortWidth)
	// cohortSlots is the ring's size: more bins than the horizon holds,
	// so a slot is reused only for a bin a whole ring newer, by when its
	// old bin has left the horizon.
	cohortSlots = 128
	// A slot packs a bin's tag (its number modulo 2^cohortTagBits) above
	// its count, so that one atomic word holds both.
	cohortCountBits = 40
	cohortCountMask = 1<<cohortCountBits - 1
	cohortTagMask   = 1<<(64-cohortCountBits) - 1
)

// Cohorts counts the records that passed a checkpoint by the origin time
// of their pathway, in CohortWidth bins. Record is safe for concurrent
// use, allocation-free and lock-free for bins within the last cohortSlots
// widths (BenchmarkCohortsRecord); a record of an older origin takes a
// mutex. The zero value is ready to use.
type Cohorts struct {
	slots [cohortSlots]atomic.Uint64
	mu    sync.Mutex
	// spilled holds the bins whose slot a newer bin took, and bins too
	// old for the ring when they were recorded; older, those of them that
	// left the horizon (Counts folds them).
	spilled map[int64]uint64
	older   uint64
}

// CohortCount is the number of records of one origin bin.
type CohortCount struct {
	// Bin is the bin's start, Unix seconds (a multiple of CohortWidth).
	Bin int64
	// Count is the number of records whose origin fell in the bin.
	Count uint64
}

// CohortCounts is what a Cohorts holds at one moment, cumulatively: the
// bins within the horizon one by one, the rest in Older.
type CohortCounts struct {
	// Since is the start of the first bin kept one by one, Unix seconds:
	// every record whose origin bin starts before it is in Older.
	Since int64
	// Older counts the records with an origin before Since.
	Older uint64
	// Bins are the bins from Since on with a count, oldest first.
	Bins []CohortCount
}

// Record counts one record whose pathway's origin is origin (Unix
// nanoseconds).
func (c *Cohorts) Record(origin int64) {
	bin := floorDiv(origin, cohortWidthNs)
	slot := &c.slots[uint64(bin)%cohortSlots]
	tag := uint64(bin) & cohortTagMask
	for {
		v := slot.Load()
		if v>>cohortCountBits == tag && v&cohortCountMask != 0 {
			if slot.CompareAndSwap(v, v+1) {
				return
			}
			continue
		}
		c.claim(slot, v, bin, tag)
		return
	}
}

// claim records a first record of bin in slot, which holds v: it takes
// the slot when the slot is empty or holds an older bin (spilling that
// bin's count), and counts the record in spilled when the slot holds a
// newer bin. It reports whether it took the slot.
func (c *Cohorts) claim(slot *atomic.Uint64, v uint64, bin int64, tag uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if v&cohortCountMask != 0 {
			held := c.binOf(v, bin)
			if held == bin {
				if slot.CompareAndSwap(v, v+1) {
					return true
				}
				v = slot.Load()
				continue
			}
			if held > bin {
				c.spill(bin, 1)
				return false
			}
		}
		if slot.CompareAndSwap(v, tag<<cohortCountBits|1) {
			if n := v & cohortCountMask; n != 0 {
				c.spill(c.binOf(v, bin), n)
			}
			return true
		}
		v = slot.Load()
	}
}

// binOf returns the bin a slot value's tag stands for: the bin with that
// tag nearest near (tags repeat every 2^24 bins, 2.6 years).
func (*Cohorts) binOf(v uint64, near int64) int64 {
	tag := int64(v >> cohortCountBits)
	const period = cohortTagMask + 1
	b := near - floorMod(near, period) + tag
	switch {
	case b-near > period/2:
		b -= period
	case near-b > period/2:
		b += period
	}
	return b
}

func (c *Cohorts) spill(bin int64, n uint64) {
	if c.spilled == nil {
		c.spilled = map[int64]uint64{}
	}
	c.spilled[bin] += n
}

// Counts returns the cumulative counts at now (Unix nanoseconds): bins
// from CohortHorizon before now's bin on, one by one; older ones summed.
// It is safe to call concurrently with Record; it allocates.
func (c *Cohorts) Counts(now int64) CohortCounts {
	nowBin := floorDiv(now, cohortWidthNs)
	since := nowBin - int64(CohortHorizon/CohortWidth)
	out := CohortCounts{Since: since * cohortWidthNs / int64(time.Second)}
	bins := map[int64]uint64{}
	c.mu.Lock()
	for b, n := range c.spilled {
		if b < since {
			c.older += n
			delete(c.spilled, b)
			continue
		}
		bins[b] += n
	}
	out.Older = c.older
	for i := range c.slots {
		v := c.slots[i].Load()
		if n := v & cohortCountMask; n != 0 {
			bins[c.binOf(v, nowBin)] += n
		}
	}
	c.mu.Unlock()
	for b, n := range bins {
		if b < since {
			out.Older += n
			continue
		}
		out.Bins = append(out.Bins, CohortCount{Bin: b * cohortWidthNs / int64(time.Second), Count: n})
	}
	slices.SortFunc(out.Bins, func(a, b CohortCount) int { return int(a.Bin - b.Bin) })
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
