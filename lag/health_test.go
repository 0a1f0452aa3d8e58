// SPDX-License-Identifier: Apache-2.0

package lag_test

import (
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/lag"
)

// step is one synthetic measurement of one partition.
type step struct {
	committed, records int64
	members            int
}

// observe feeds steps a second apart to a Tracker (window 10 s) and
// returns the health after the last.
func observe(t *testing.T, steps []step, retention map[string]time.Duration, seconds float64) lag.Health {
	t.Helper()
	tr := lag.NewTracker(10 * time.Second)
	t0 := time.Unix(1_700_000_000, 0)
	var h lag.Health
	for i, s := range steps {
		hs := tr.Observe(t0.Add(time.Duration(i)*time.Second), []lag.PartitionLag{{
			Group: "g", Topic: "t", Partition: 0, Committed: s.committed, End: s.committed + s.records,
			Records: s.records, Seconds: seconds, Members: s.members,
		}}, retention)
		if len(hs) != 1 {
			t.Fatalf("Observe returned %d healths, want 1", len(hs))
		}
		h = hs[0]
	}
	return h
}

func TestTrackerRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
		want  lag.Status
	}{
		{"too few samples", []step{{10, 5, 1}, {10, 5, 1}}, lag.StatusUnknown},
		{"caught up", []step{{10, 0, 1}, {20, 0, 1}, {30, 0, 1}}, lag.StatusOK},
		{"lag 0 once", []step{{10, 5, 1}, {15, 0, 1}, {15, 3, 1}}, lag.StatusOK},
		{"draining", []step{{10, 50, 1}, {30, 40, 1}, {50, 30, 1}}, lag.StatusOK},
		{"fluctuating", []step{{10, 5, 1}, {20, 8, 1}, {30, 6, 1}}, lag.StatusOK},
		{"falling behind", []step{{10, 5, 1}, {12, 9, 1}, {14, 9, 1}, {16, 14, 1}}, lag.StatusWarn},
		{"flat lag while committing", []step{{10, 5, 1}, {12, 5, 1}, {14, 5, 1}}, lag.StatusOK},
		{"stalled with members", []step{{10, 5, 2}, {10, 6, 2}, {10, 9, 2}}, lag.StatusStall},
		{"stalled, members unknown", []step{{10, 5, -1}, {10, 5, -1}, {10, 5, -1}}, lag.StatusStall},
		{"stopped, no members", []step{{10, 5, 1}, {10, 5, 0}, {10, 5, 0}}, lag.StatusStop},
		{"empty group caught up", []step{{10, 0, 0}, {10, 0, 0}, {10, 0, 0}}, lag.StatusOK},
		{"rewound", []step{{10, 0, 1}, {20, 0, 1}, {5, 15, 1}}, lag.StatusRewind},
		{"rewound beats stall", []step{{10, 5, 1}, {4, 11, 1}, {4, 11, 1}}, lag.StatusRewind},
		{"first commit is no rewind", []step{{-1, 5, 1}, {3, 2, 1}, {3, 2, 1}}, lag.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := observe(t, tc.steps, nil, 1).Status; got != tc.want {
				t.Fatalf("status %s, want %s", got, tc.want)
			}
		})
	}
}

func TestTrackerWindowSlides(t *testing.T) {
	tr := lag.NewTracker(3 * time.Second)
	t0 := time.Unix(1_700_000_000, 0)
	var h lag.Health
	// Committing until second 4, stalled from then on: the window of 3 s
	// holds only stalled samples from second 7.
	for i := range 10 {
		c := int64(min(i, 4) * 10)
		h = tr.Observe(t0.Add(time.Duration(i)*time.Second), []lag.PartitionLag{{Group: "g", Topic: "t", Committed: c, Records: 7, Members: 1}}, nil)[0]
		want := lag.StatusOK
		switch {
		case i < lag.MinSamples-1:
			want = lag.StatusUnknown
		case i >= 7:
			want = lag.StatusStall
		}
		if h.Status != want {
			t.Fatalf("second %d: status %s, want %s", i, h.Status, want)
		}
	}
	if h.Samples != 4 || h.Span != 3*time.Second {
		t.Fatalf("window holds %d samples over %s, want 4 over 3s", h.Samples, h.Span)
	}
}

func TestTrackerVelocityAndDrain(t *testing.T) {
	h := observe(t, []step{{0, 100, 1}, {30, 80, 1}, {60, 60, 1}, {90, 40, 1}}, nil, 1)
	if !h.VelocityKnown || h.Velocity != -20 || h.Drain != 2 {
		t.Fatalf("velocity %v (known %v), drain %v; want -20/s and 2 s", h.Velocity, h.VelocityKnown, h.Drain)
	}
	h = observe(t, []step{{0, 10, 1}, {30, 20, 1}, {60, 30, 1}}, nil, 1)
	if h.Velocity != 10 || h.Drain != -1 || h.Status != lag.StatusWarn {
		t.Fatalf("growing: velocity %v, drain %v, status %s; want 10/s, -1, warn", h.Velocity, h.Drain, h.Status)
	}
	h = observe(t, []step{{0, 10, 1}}, nil, 1)
	if h.VelocityKnown || h.Drain != -1 {
		t.Fatalf("one sample: velocity known %v, drain %v", h.VelocityKnown, h.Drain)
	}
}

func TestTrackerHeadroom(t *testing.T) {
	ret := map[string]time.Duration{"t": time.Minute}
	if h := observe(t, []step{{0, 5, 1}}, ret, 45); !h.HeadroomKnown || h.Headroom != 15 {
		t.Fatalf("headroom %v (known %v), want 15", h.Headroom, h.HeadroomKnown)
	}
	if h := observe(t, []step{{0, 5, 1}}, ret, 90); h.Headroom != -30 {
		t.Fatalf("past due: headroom %v, want -30", h.Headroom)
	}
	for name, tc := range map[string]struct {
		ret     map[string]time.Duration
		records int64
		seconds float64
	}{
		"infinite retention": {map[string]time.Duration{"t": -1}, 5, 45},
		"unknown retention":  {nil, 5, 45},
		"no lag":             {ret, 0, 0},
		"unknown age":        {ret, 5, -1},
	} {
		if h := observe(t, []step{{0, tc.records, 1}}, tc.ret, tc.seconds); h.HeadroomKnown {
			t.Errorf("%s: headroom %v known", name, h.Headroom)
		}
	}
}

func TestTrackerForgetsAndSkips(t *testing.T) {
	tr := lag.NewTracker(time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	part := func(p int32, records int64) lag.PartitionLag {
		return lag.PartitionLag{Group: "g", Topic: "t", Partition: p, Committed: 1, Records: records, Members: 1}
	}
	for i := range 3 {
		tr.Observe(t0.Add(time.Duration(i)*time.Second), []lag.PartitionLag{part(0, 4), part(1, 4)}, nil)
	}
	// Partition 1 leaves, comes back: its window starts again. An unknown
	// lag adds no sample; a group entry is unknown.
	tr.Observe(t0.Add(3*time.Second), []lag.PartitionLag{part(0, 4)}, nil)
	hs := tr.Observe(t0.Add(4*time.Second), []lag.PartitionLag{part(0, -1), part(1, 4), {Group: "x", Partition: -1}}, nil)
	if hs[0].Samples != 4 || hs[0].Status != lag.StatusStall {
		t.Errorf("partition 0: %d samples, %s; want 4, stall", hs[0].Samples, hs[0].Status)
	}
	if hs[1].Samples != 1 || hs[1].Status != lag.StatusUnknown {
		t.Errorf("partition 1: %d samples, %s; want 1, unknown", hs[1].Samples, hs[1].Status)
	}
	if hs[2].Status != lag.StatusUnknown || hs[2].Drain != -1 {
		t.Errorf("group entry: %+v", hs[2])
	}
}

func TestStatusCodes(t *testing.T) {
	for s, want := range map[lag.Status]int{lag.StatusUnknown: -1, lag.StatusOK: 0, lag.StatusWarn: 1, lag.StatusStall: 2, lag.StatusStop: 3, lag.StatusRewind: 4} {
		if s.Code() != want {
			t.Errorf("%s: code %d, want %d", s, s.Code(), want)
		}
	}
	if b, _ := lag.StatusStall.MarshalText(); string(b) != "stall" {
		t.Errorf("stall encodes as %q", b)
	}
	var s lag.Status
	if err := s.UnmarshalText([]byte("rewind")); err != nil || s != lag.StatusRewind {
		t.Errorf("rewind decodes as %s, %v", s, err)
	}
	if err := s.UnmarshalText([]byte("fine")); err == nil {
		t.Error("an unknown name decodes")
	}
}

func TestSumHealth(t *testing.T) {
	ok := lag.Health{Status: lag.StatusOK, Samples: 3, Velocity: -5, VelocityKnown: true, Drain: 2, Headroom: 100, HeadroomKnown: true}
	stall := lag.Health{Status: lag.StatusStall, Samples: 3, Velocity: 1, VelocityKnown: true, Drain: -1, Headroom: 40, HeadroomKnown: true}
	h := lag.SumHealth([]lag.Health{ok, stall, {Status: lag.StatusOK, Samples: 3, VelocityKnown: true, Drain: -1}}, 20)
	if h.Status != lag.StatusStall || h.Velocity != -4 || h.Drain != 5 || h.Headroom != 40 {
		t.Fatalf("sum %+v; want stall, -4/s, drain 5 s, headroom 40", h)
	}
	unknown := lag.Health{Drain: -1}
	if h := lag.SumHealth([]lag.Health{ok, unknown}, 10); h.Status != lag.StatusUnknown || h.VelocityKnown || h.Drain != -1 {
		t.Fatalf("with an unknown partition: %+v", h)
	}
	if h := lag.SumHealth(nil, -1); h.Status != lag.StatusUnknown {
		t.Fatalf("none: %+v", h)
	}
}
