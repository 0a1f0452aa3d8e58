// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"cmp"
	"slices"
	"time"

	"github.com/kretrieve/kretrieve/pathway"
)

// Bounds on the origin-time counts of a window (Series.Cohorts).
const (
	// MaxCohortBins bounds the bins of one series: the horizon's, and the
	// minute of clock skew a pathway header may claim ahead.
	MaxCohortBins = int(pathway.CohortHorizon/pathway.CohortWidth) + int(pathway.MaxSkew/pathway.CohortWidth) + 2
	// MaxWindowCohortBins bounds the bins of a whole window: at most
	// about 8 bytes each, they add at most 256 KB to a record.
	MaxWindowCohortBins = 32 << 10
)

// ReasonCohorts: a series' origin-time counts are malformed or beyond
// MaxCohortBins or MaxWindowCohortBins.
const ReasonCohorts = "bad cohorts"

// wireCohorts is a series' pathway.CohortCounts as JSON, the bins within
// the horizon only: the counts of consecutive bins from start (Unix
// seconds, a multiple of pathway.CohortWidth), zeros included, without
// leading or trailing zeros.
type wireCohorts struct {
	Start  int64    `json:"start"`
	Counts []uint64 `json:"counts"`
}

const widthSeconds = int64(pathway.CohortWidth / time.Second)

// toWireCohorts encodes bins, oldest first (nil when there are none).
func toWireCohorts(bins []pathway.CohortCount) *wireCohorts {
	if len(bins) == 0 {
		return nil
	}
	first, last := bins[0].Bin, bins[len(bins)-1].Bin
	wc := &wireCohorts{Start: first, Counts: make([]uint64, (last-first)/widthSeconds+1)}
	for _, b := range bins {
		wc.Counts[(b.Bin-first)/widthSeconds] = min(b.Count, MaxCount)
	}
	return wc
}

// cohorts decodes wc for a window ending at end.
func (wc *wireCohorts) cohorts(end time.Time) ([]pathway.CohortCount, error) {
	if wc == nil {
		return nil, nil
	}
	switch {
	case len(wc.Counts) == 0 || len(wc.Counts) > MaxCohortBins:
		return nil, invalid(ReasonCohorts, "%d bins, 1 to %d", len(wc.Counts), MaxCohortBins)
	case wc.Start%widthSeconds != 0:
		return nil, invalid(ReasonCohorts, "start %d not a multiple of %d s", wc.Start, widthSeconds)
	case wc.Start < earliest.Unix() || wc.Start+int64(len(wc.Counts))*widthSeconds > end.Add(pathway.MaxSkew+pathway.CohortWidth).Unix():
		return nil, invalid(ReasonCohorts, "bins from %d to %d out of range", wc.Start, wc.Start+int64(len(wc.Counts))*widthSeconds)
	}
	out := make([]pathway.CohortCount, 0, len(wc.Counts))
	for i, n := range wc.Counts {
		if n > MaxCount {
			return nil, invalid(ReasonCohorts, "count %d over %d", n, uint64(MaxCount))
		}
		if n > 0 {
			out = append(out, pathway.CohortCount{Bin: wc.Start + int64(i)*widthSeconds, Count: n})
		}
	}
	return out, nil
}

// CohortSeries is one pathway checkpoint's records by origin time, summed
// over every instance read: stale and final windows count too, since a
// process that stopped still passed the records it counted.
type CohortSeries struct {
	// Checkpoint, Hash and Parent identify the series, as a Row's do.
	Checkpoint pathway.Checkpoint
	Hash       uint64
	Parent     uint64
	// Bins are the counts by origin bin from View.CohortsSince on, oldest
	// first, bins without records left out.
	Bins []pathway.CohortCount
}

// mergeCohorts sums the windows' origin-time counts by series, from the
// start of the horizon of the newest window on: a bin older than that is
// left out, as its older windows' publishers had already dropped it.
func mergeCohorts(windows []Window) (since int64, out []CohortSeries) {
	var newest time.Time
	for _, w := range windows {
		if w.End.After(newest) {
			newest = w.End
		}
	}
	if newest.IsZero() {
		return 0, nil
	}
	since = newest.Add(-pathway.CohortHorizon).Unix()
	since -= since % widthSeconds
	sums := map[seriesKey]map[int64]uint64{}
	for _, w := range windows {
		for _, s := range w.Series {
			for _, b := range s.Cohorts {
				if b.Bin < since {
					continue
				}
				k := seriesKey{s.Checkpoint, s.Hash, s.Parent}
				if sums[k] == nil {
					sums[k] = map[int64]uint64{}
				}
				sums[k][b.Bin] += b.Count
			}
		}
	}
	for k, bins := range sums {
		cs := CohortSeries{Checkpoint: k.cp, Hash: k.hash, Parent: k.parent}
		for b, n := range bins {
			cs.Bins = append(cs.Bins, pathway.CohortCount{Bin: b, Count: n})
		}
		slices.SortFunc(cs.Bins, func(a, b pathway.CohortCount) int { return cmp.Compare(a.Bin, b.Bin) })
		out = append(out, cs)
	}
	slices.SortFunc(out, func(a, b CohortSeries) int {
		return cmp.Or(cmp.Compare(a.Checkpoint.Edge(), b.Checkpoint.Edge()), cmp.Compare(a.Hash, b.Hash), cmp.Compare(a.Parent, b.Parent))
	})
	return since, out
}

// boundCohorts drops the origin-time counts of the least busy series
// until the window holds at most MaxWindowCohortBins bins, and reports
// how many series lost theirs.
func boundCohorts(series []Series) (dropped int) {
	bins := func(s Series) int {
		if len(s.Cohorts) == 0 {
			return 0
		}
		return int((s.Cohorts[len(s.Cohorts)-1].Bin-s.Cohorts[0].Bin)/widthSeconds) + 1
	}
	total := 0
	for _, s := range series {
		total += bins(s)
	}
	if total <= MaxWindowCohortBins {
		return 0
	}
	order := make([]int, len(series))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(series[a].Total, series[b].Total) })
	for _, i := range order {
		if total <= MaxWindowCohortBins {
			break
		}
		if n := bins(series[i]); n > 0 {
			total -= n
			series[i].Cohorts = nil
			dropped++
		}
	}
	return dropped
}
