// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"cmp"
	"slices"
	"time"

	"github.com/kretrieve/kretrieve/pathway"
)

// View is the pipeline's pathways at one moment: the merged windows of
// every instance that is not stale.
type View struct {
	// Time is the moment of the view.
	Time time.Time
	// Instances are every instance read, stale ones included, by id.
	Instances []Instance
	// Rows are the merged pathway series, in pathway order: each pathway
	// from its first checkpoint on, a checkpoint followed by the ones its
	// records reach next (Depth one more); the busiest pathways first;
	// overflow series last.
	Rows []Row
	// Skipped counts the records refused, by InvalidError reason.
	Skipped map[string]uint64
	// CohortsSince is the start (Unix seconds) of the first origin bin of
	// Cohorts: the horizon of the newest window.
	CohortsSince int64
	// Cohorts are every series' records by origin time, over every
	// instance read, stale ones included (see CohortSeries).
	Cohorts []CohortSeries
}

// Instance is the newest window of one process.
type Instance struct {
	Instance, Service string
	Start, End        time.Time
	Interval          time.Duration
	// Series is the number of series in the window.
	Series int
	// Stale says the window was published too long ago to count: the
	// process stopped or cannot publish. Its series are not in the rows.
	Stale bool
	// Late says the window's rates are not current: the process stopped
	// (Final), or its next window is overdue (see Window.Late). Its
	// series are in the rows, which count it in Row.Late.
	Late bool
	// Final says the process stopped: the window is its last.
	Final bool
	// Seen is when the window was published as far as the reader can
	// tell, on the reader's clock (Window.Seen).
	Seen time.Time
	// Feeds are the window's: where the process's indexes stand.
	Feeds []Feed
}

// Row is one pathway checkpoint over the instances' windows.
type Row struct {
	// Checkpoint is where the latencies were measured.
	Checkpoint pathway.Checkpoint
	// Hash and Parent identify the pathway; both 0 for overflow series.
	Hash, Parent uint64
	// Depth is the checkpoint's position in its pathway, 0 for the first.
	Depth int
	// Count is the number of records in the windows.
	Count uint64
	// Total is the number of records since the instances started.
	Total uint64
	// Rate is records per second: the sum over the instances of each
	// window's count divided by its length.
	Rate float64
	// Instances is the number of instances that measured the series.
	Instances int
	// Late is the number of those instances whose windows are late
	// (Instance.Late): when it equals Instances, the row's Rate is the
	// last one measured, not a current one.
	Late int
	// Latency and Origin are the merged edge and from-origin latencies.
	Latency, Origin pathway.Snapshot
}

// Edge returns the row's checkpoint as an edge of the pipeline graph
// (pathway.Checkpoint.Edge).
func (r Row) Edge() string { return r.Checkpoint.Edge() }

// Stale reports whether w was published more than staleAfter before now;
// with staleAfter 0, more than StaleIntervals of its interval and
// MinStale. Its age runs from Seen, the reader's estimate on its own
// clock, or from End (the writer's clock) when Seen is zero.
func (w Window) Stale(now time.Time, staleAfter time.Duration) bool {
	if staleAfter <= 0 {
		staleAfter = max(StaleIntervals*w.Interval, MinStale)
	}
	return now.Sub(w.published()) > staleAfter
}

// Late reports whether w's rates are not current at now: it is the final
// window of its process, or the next window is overdue, w having been
// published (as Stale judges) more than its interval and MinStale ago.
func (w Window) Late(now time.Time) bool {
	return w.Final || now.Sub(w.published()) > w.Interval+MinStale
}

// published returns Seen, or End when Seen is zero.
func (w Window) published() time.Time {
	if w.Seen.IsZero() {
		return w.End
	}
	return w.Seen
}

// Merge merges the windows that are not stale at now (see Window.Stale)
// into a View, one Row per (checkpoint, hash, parent). Windows are
// expected one per instance (the newest).
func Merge(windows []Window, now time.Time, staleAfter time.Duration) View {
	v := View{Time: now}
	index := map[seriesKey]int{}
	for _, w := range windows {
		stale, late := w.Stale(now, staleAfter), w.Late(now)
		v.Instances = append(v.Instances, Instance{Instance: w.Instance, Service: w.Service, Start: w.Start, End: w.End,
			Interval: w.Interval, Series: len(w.Series), Stale: stale, Late: late, Final: w.Final, Seen: w.Seen, Feeds: w.Feeds})
		if stale {
			continue
		}
		// At least MinInterval: Decode bounds counts over that length,
		// so no rate exceeds MaxRate.
		secs := max(w.End.Sub(w.Start), MinInterval).Seconds()
		for _, s := range w.Series {
			k := seriesKey{s.Checkpoint, s.Hash, s.Parent}
			i, ok := index[k]
			if !ok {
				i = len(v.Rows)
				index[k] = i
				v.Rows = append(v.Rows, Row{Checkpoint: s.Checkpoint, Hash: s.Hash, Parent: s.Parent})
			}
			r := &v.Rows[i]
			r.Count += s.Edge.Count
			r.Total += s.Total
			if secs > 0 {
				r.Rate += float64(s.Edge.Count) / secs
			}
			r.Instances++
			if late {
				r.Late++
			}
			r.Latency.Merge(s.Edge)
			r.Origin.Merge(s.Origin)
		}
	}
	slices.SortFunc(v.Instances, func(a, b Instance) int { return cmp.Compare(a.Instance, b.Instance) })
	v.Rows = pathwayOrder(v.Rows)
	v.CohortsSince, v.Cohorts = mergeCohorts(windows)
	return v
}

// pathwayOrder orders rows as View.Rows says and sets their Depth.
func pathwayOrder(rows []Row) []Row {
	byHash := map[uint64]bool{}
	for _, r := range rows {
		if r.Hash != 0 {
			byHash[r.Hash] = true
		}
	}
	children := map[uint64][]int{}
	var roots, overflow []int
	for i, r := range rows {
		switch {
		case r.Hash == 0:
			overflow = append(overflow, i)
		case r.Parent == 0 || !byHash[r.Parent] || r.Parent == r.Hash:
			roots = append(roots, i)
		default:
			children[r.Parent] = append(children[r.Parent], i)
		}
	}
	byEdge := func(a, b int) int {
		return cmp.Or(cmp.Compare(rows[a].Edge(), rows[b].Edge()), cmp.Compare(rows[a].Hash, rows[b].Hash), cmp.Compare(rows[a].Parent, rows[b].Parent))
	}
	// The busiest pathways first.
	slices.SortFunc(roots, func(a, b int) int { return cmp.Or(cmp.Compare(rows[b].Total, rows[a].Total), byEdge(a, b)) })
	for _, c := range children {
		slices.SortFunc(c, byEdge)
	}
	slices.SortFunc(overflow, byEdge)
	out := make([]Row, 0, len(rows))
	visited := make([]bool, len(rows))
	type item struct{ i, depth int }
	var stack []item
	walk := func(i int) {
		stack = append(stack[:0], item{i, 0})
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if visited[it.i] {
				continue
			}
			visited[it.i] = true
			r := rows[it.i]
			r.Depth = it.depth
			out = append(out, r)
			c := children[r.Hash]
			for j := len(c) - 1; j >= 0; j-- { // pushed in reverse: popped in order
				stack = append(stack, item{c[j], it.depth + 1})
			}
		}
	}
	for _, i := range roots {
		walk(i)
	}
	// Rows only reachable through a cycle (hash collisions, or hostile
	// windows), then the overflow series.
	for i := range rows {
		if !visited[i] && rows[i].Hash != 0 {
			walk(i)
		}
	}
	for _, i := range overflow {
		walk(i)
	}
	return out
}
