// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/pathway"
)

func TestMergeAcrossInstances(t *testing.T) {
	in := cp("kretrieve-retrieval", "retrieval", "retrieval.requests", pathway.In)
	out := cp("kretrieve-retrieval", "retrieval", "retrieval.candidates", pathway.Out)
	now := t0.Add(time.Minute)
	// Two retrieval workers with windows of different lengths, and one
	// that stopped long ago.
	a := Window{Service: "kretrieve-retrieval", Instance: "a", Start: now.Add(-10 * time.Second), End: now.Add(-time.Second), Interval: 10 * time.Second,
		Series: []Series{
			{Checkpoint: in, Hash: 2, Parent: 1, Total: 100, Edge: snapshot(ms(1), ms(1), ms(1)), Origin: snapshot(ms(2), ms(2), ms(2))},
			{Checkpoint: out, Hash: 3, Parent: 2, Total: 90, Edge: snapshot(ms(5)), Origin: snapshot(ms(7))},
		}}
	b := Window{Service: "kretrieve-retrieval", Instance: "b", Start: now.Add(-5 * time.Second), End: now, Interval: 5 * time.Second,
		Series: []Series{
			{Checkpoint: in, Hash: 2, Parent: 1, Total: 50, Edge: snapshot(ms(100), ms(100)), Origin: snapshot(ms(200), ms(200))},
		}}
	gone := Window{Service: "kretrieve-retrieval", Instance: "c", Start: now.Add(-time.Hour), End: now.Add(-30 * time.Minute), Interval: 10 * time.Second,
		Series: []Series{{Checkpoint: in, Hash: 2, Parent: 1, Total: 1000, Edge: snapshot(ms(1)), Origin: snapshot(ms(1))}}}
	v := Merge([]Window{gone, b, a}, now, 0)

	if len(v.Instances) != 3 || v.Instances[0].Instance != "a" || v.Instances[2].Instance != "c" || !v.Instances[2].Stale || v.Instances[0].Stale || v.Instances[1].Stale {
		t.Fatalf("instances %+v", v.Instances)
	}
	if len(v.Rows) != 2 {
		t.Fatalf("rows %+v", v.Rows)
	}
	r := v.Rows[0]
	if r.Checkpoint != in || r.Hash != 2 || r.Count != 5 || r.Total != 150 || r.Instances != 2 || r.Depth != 0 {
		t.Fatalf("merged row %+v", r)
	}
	// 3 records in 9 s and 2 in 5 s.
	if want := 3.0/9 + 2.0/5; math.Abs(r.Rate-want) > 1e-9 {
		t.Errorf("rate %v, want %v", r.Rate, want)
	}
	// The merged histogram: 3 at 1 ms, 2 at 100 ms.
	within := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) <= 0.025*float64(want) }
	if p50, p99 := r.Latency.Quantile(0.5), r.Latency.Quantile(0.99); !within(p50, ms(1)) || !within(p99, ms(100)) {
		t.Errorf("edge p50 %s p99 %s, want 1ms and 100ms", p50, p99)
	}
	if p := r.Origin.Quantile(0.8); !within(p, ms(200)) {
		t.Errorf("origin p80 %s, want 200ms", p)
	}
	if o := v.Rows[1]; o.Checkpoint != out || o.Depth != 1 || o.Count != 1 || o.Instances != 1 {
		t.Errorf("second row %+v", o)
	}
}

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func TestStale(t *testing.T) {
	w := Window{End: t0, Interval: 10 * time.Second}
	for _, tt := range []struct {
		interval, after, staleAfter time.Duration
		stale                       bool
	}{
		{10 * time.Second, 30 * time.Second, 0, false},
		{10 * time.Second, 30*time.Second + 1, 0, true},
		{100 * time.Millisecond, 4 * time.Second, 0, false}, // MinStale
		{100 * time.Millisecond, MinStale + 1, 0, true},
		{10 * time.Second, 2 * time.Second, time.Second, true},
		{10 * time.Second, -time.Minute, 0, false}, // from the future
	} {
		w.Interval = tt.interval
		if got := w.Stale(t0.Add(tt.after), tt.staleAfter); got != tt.stale {
			t.Errorf("interval %s, %s after its end, staleAfter %s: stale %v, want %v", tt.interval, tt.after, tt.staleAfter, got, tt.stale)
		}
	}
}

func TestPathwayOrder(t *testing.T) {
	row := func(edge string, hash, parent, total uint64) Row {
		return Row{Checkpoint: pathway.Checkpoint{Service: "s", Topic: edge, Direction: pathway.Out}, Hash: hash, Parent: parent, Total: total}
	}
	rows := []Row{
		row("overflow", 0, 0, 1000),
		row("c", 13, 12, 10),
		row("dead-letter", 21, 0, 2),
		row("b", 12, 11, 10),
		row("branch-y", 15, 12, 1),
		row("a", 11, 0, 10),
		row("branch-x", 14, 12, 2),
		row("orphan", 31, 99, 5), // its parent is not in the view
		row("cycle-1", 41, 42, 1),
		row("cycle-2", 42, 41, 1),
	}
	got := pathwayOrder(rows)
	want := []struct {
		topic string
		depth int
	}{
		{"a", 0}, {"b", 1}, {"branch-x", 2}, {"branch-y", 2}, {"c", 2},
		{"orphan", 0}, {"dead-letter", 0},
		{"cycle-1", 0}, {"cycle-2", 1},
		{"overflow", 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Checkpoint.Topic != w.topic || got[i].Depth != w.depth {
			t.Errorf("row %d: %s at depth %d, want %s at %d", i, got[i].Checkpoint.Topic, got[i].Depth, w.topic, w.depth)
		}
	}
}

// TestMergeCohorts: origin-time counts are summed over every instance,
// stale and final ones included (a stopped process passed its records
// all the same), from the horizon of the newest window on.
func TestMergeCohorts(t *testing.T) {
	in := cp("kretrieve-retrieval", "retrieval", "retrieval.requests", pathway.In)
	now := t0.Add(time.Hour)
	bin := now.Unix() - now.Unix()%5
	old := bin - 11*60 // beyond the 10 min horizon
	live := Window{Service: "s", Instance: "a", Start: now.Add(-10 * time.Second), End: now, Interval: 10 * time.Second,
		Series: []Series{{Checkpoint: in, Hash: 2, Parent: 1, Total: 9, Cohorts: []pathway.CohortCount{{Bin: bin - 60, Count: 5}, {Bin: bin, Count: 2}}}}}
	stopped := Window{Service: "s", Instance: "b", Start: now.Add(-3 * time.Minute), End: now.Add(-2 * time.Minute), Interval: 10 * time.Second, Final: true,
		Series: []Series{{Checkpoint: in, Hash: 2, Parent: 1, Total: 9, Cohorts: []pathway.CohortCount{{Bin: old, Count: 4}, {Bin: bin - 60, Count: 3}}}}}
	v := Merge([]Window{live, stopped}, now, 0)
	if !v.Instances[1].Stale {
		t.Fatalf("the stopped instance is not stale: %+v", v.Instances)
	}
	if want := bin - 600; v.CohortsSince != want {
		t.Errorf("CohortsSince %d, want %d", v.CohortsSince, want)
	}
	want := []pathway.CohortCount{{Bin: bin - 60, Count: 8}, {Bin: bin, Count: 2}}
	if len(v.Cohorts) != 1 || v.Cohorts[0].Checkpoint != in || v.Cohorts[0].Hash != 2 || !reflect.DeepEqual(v.Cohorts[0].Bins, want) {
		t.Errorf("cohorts %+v, want %+v", v.Cohorts, want)
	}
}

// TestBoundCohorts: a window over MaxWindowCohortBins loses the counts of
// its least busy series first.
func TestBoundCohorts(t *testing.T) {
	bins := func(n int) []pathway.CohortCount {
		return []pathway.CohortCount{{Bin: 0, Count: 1}, {Bin: int64(n-1) * 5, Count: 1}}
	}
	series := []Series{{Total: 100, Cohorts: bins(MaxWindowCohortBins / 2)}, {Total: 1, Cohorts: bins(MaxWindowCohortBins/2 + 1)}, {Total: 50, Cohorts: bins(10)}}
	if n := boundCohorts(series); n != 1 || series[1].Cohorts != nil || series[0].Cohorts == nil || series[2].Cohorts == nil {
		t.Errorf("dropped %d: %+v", n, series)
	}
}
