// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Status is the health of a group's lag on a partition, in Burrow's sense,
// judged by a Tracker over a sliding window of measurements. Its zero
// value is StatusUnknown. The statuses are ordered by severity, OK the
// least and Rewind the most.
type Status uint8

// The statuses; see Tracker for the rules.
const (
	// StatusUnknown: fewer than MinSamples measurements in the window.
	StatusUnknown Status = iota
	// StatusOK: the group keeps up.
	StatusOK
	// StatusWarn: the group commits but falls behind.
	StatusWarn
	// StatusStall: the group has members but does not commit, with lag.
	StatusStall
	// StatusStop: the group has no members and does not commit, with lag.
	StatusStop
	// StatusRewind: the committed offset moved back.
	StatusRewind
)

var statusNames = [...]string{"unknown", "ok", "warn", "stall", "stop", "rewind"}

// String returns the status's lower-case name: "ok", "warn", "stall",
// "stop", "rewind" or "unknown".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Code is the status's value on the gauge kretrieve.consumer.lag.status:
// 0 ok, 1 warn, 2 stall, 3 stop, 4 rewind (so `>= 2` means consumption
// stopped or went back), -1 unknown (not exported).
func (s Status) Code() int {
	if s == StatusUnknown || int(s) >= len(statusNames) {
		return -1
	}
	return int(s) - 1
}

// MarshalText encodes the status as its name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a status's name.
func (s *Status) UnmarshalText(b []byte) error {
	i := slices.Index(statusNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("lag status %q: want one of %v", b, statusNames)
	}
	*s = Status(i)
	return nil
}

// Health is the health of a group's lag on a partition over a window of
// measurements.
type Health struct {
	// Status is the status by the Tracker's rules.
	Status Status
	// Samples is the number of measurements in the window, Span the time
	// between the first and the last.
	Samples int
	Span    time.Duration
	// Velocity is how fast the lag in records changes over the window,
	// in records per second: the last lag minus the first, over Span;
	// negative when the group drains its lag. Known only with two
	// samples or more (VelocityKnown).
	Velocity      float64
	VelocityKnown bool
	// Drain is the estimated time to drain the lag at the current
	// velocity, in seconds: the last lag over -Velocity; -1 when the
	// group is not draining (no lag, or a lag that does not shrink).
	Drain float64
	// Headroom is the time, in seconds, before the oldest unconsumed
	// record is due for deletion by its topic's retention.ms: the
	// retention minus the record's age (negative: past due). Known
	// (HeadroomKnown) only with lag, a known age and a finite retention.
	Headroom      float64
	HeadroomKnown bool
}

// unknownHealth is the health of an entry nothing is known about.
var unknownHealth = Health{Drain: -1}

// Default window of a Tracker.
const (
	// MinSamples is the number of measurements a status needs.
	MinSamples = 3
	// maxSamples bounds the measurements kept per partition.
	maxSamples = 64
)

// sample is one measurement of a group on a partition.
type sample struct {
	at                 time.Time
	committed, records int64
	members            int
}

// Tracker judges the health of consumer groups' lag over a sliding window
// of measurements: Observe it each measurement. It keeps, per group,
// topic and partition, the measurements of the last Window (at most 64),
// and judges each by these rules, the first that holds:
//
//  1. unknown: fewer than MinSamples measurements with a known lag;
//  2. REWIND: the committed offset decreased between two measurements;
//  3. OK: the lag was 0 at some measurement;
//  4. STOP: the committed offset did not change over the window, with lag
//     at every measurement, and the group had no members at the last one;
//  5. STALL: the same, but the group had members (or their count is
//     unknown, as for a Reader);
//  6. WARN: the committed offset advanced, and the lag never decreased
//     between two measurements and grew over the window;
//  7. OK otherwise.
//
// Kafka's OffsetFetch returns no commit timestamps (Burrow judges those):
// "did not change" is over the measurements, so Window must span several
// of the group's commit intervals. A Tracker is safe for concurrent use.
type Tracker struct {
	window time.Duration

	mu    sync.Mutex
	byKey map[attrKey][]sample
}

// NewTracker returns a Tracker judging over window (at least MinSamples
// measurements must fall into it for a status).
func NewTracker(window time.Duration) *Tracker {
	return &Tracker{window: window, byKey: map[attrKey][]sample{}}
}

// Observe adds the measurement lags taken at at, and returns their health
// in the order of lags, with Headroom from retention (a topic's
// retention.ms, by topic; a missing or negative one is infinite). Entries
// about a whole group, or with an unknown lag, add nothing and are
// unknown; partitions absent from lags are forgotten.
func (t *Tracker) Observe(at time.Time, lags []PartitionLag, retention map[string]time.Duration) []Health {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Health, len(lags))
	next := make(map[attrKey][]sample, len(lags))
	for i, l := range lags {
		out[i] = unknownHealth
		if l.Partition < 0 {
			continue
		}
		k := attrKey{l.Group, l.Topic, l.Partition}
		ss := t.byKey[k]
		if l.Records >= 0 && (len(ss) == 0 || at.After(ss[len(ss)-1].at)) {
			ss = append(ss, sample{at: at, committed: l.Committed, records: l.Records, members: l.Members})
		}
		ss = trim(ss, at.Add(-t.window))
		next[k] = ss
		out[i] = judge(ss)
		out[i].Headroom, out[i].HeadroomKnown = headroom(l, retention[l.Topic])
	}
	t.byKey = next
	return out
}

// trim drops the samples before from, and the oldest beyond maxSamples.
func trim(ss []sample, from time.Time) []sample {
	i, _ := slices.BinarySearchFunc(ss, from, func(s sample, t time.Time) int { return s.at.Compare(t) })
	i = max(i, len(ss)-maxSamples)
	return slices.Clip(ss[i:])
}

// headroom is the retention minus the age of l's oldest unconsumed record,
// in seconds, and whether it is known (see Health.Headroom).
func headroom(l PartitionLag, retention time.Duration) (float64, bool) {
	if retention <= 0 || l.Records <= 0 || l.Seconds < 0 {
		return 0, false
	}
	return retention.Seconds() - l.Seconds, true
}

// judge applies the Tracker's rules to the samples of one partition, the
// oldest first.
func judge(ss []sample) Health {
	h := unknownHealth
	h.Samples = len(ss)
	if len(ss) == 0 {
		return h
	}
	first, last := ss[0], ss[len(ss)-1]
	h.Span = last.at.Sub(first.at)
	if len(ss) >= 2 && h.Span > 0 {
		h.Velocity, h.VelocityKnown = float64(last.records-first.records)/h.Span.Seconds(), true
		if last.records > 0 && h.Velocity < 0 {
			h.Drain = float64(last.records) / -h.Velocity
		}
	}
	if len(ss) < MinSamples {
		return h
	}
	h.Status = statusOf(ss)
	return h
}

// statusOf is the status of at least MinSamples samples, by the Tracker's
// rules 2 to 7.
func statusOf(ss []sample) Status {
	moved, grew, lagged := false, true, true
	for i, s := range ss {
		if s.records == 0 {
			lagged = false
		}
		if i == 0 {
			continue
		}
		prev := ss[i-1]
		if prev.committed >= 0 && s.committed >= 0 && s.committed < prev.committed {
			return StatusRewind
		}
		moved = moved || s.committed != prev.committed
		grew = grew && s.records >= prev.records
	}
	first, last := ss[0], ss[len(ss)-1]
	switch {
	case !lagged:
		return StatusOK
	case !moved && last.members == 0:
		return StatusStop
	case !moved:
		return StatusStall
	case grew && last.records > first.records:
		return StatusWarn
	}
	return StatusOK
}

// SumHealth sums the health of partitions as one health of a group on a
// topic: the most severe status (unknown when one partition is unknown
// and none is worse than OK), the velocities added (known when all are),
// the drain time of the summed lag records at the summed velocity, and
// the least headroom. records is the summed lag (Sum), -1 when unknown.
func SumHealth(parts []Health, records int64) Health {
	h := unknownHealth
	if len(parts) == 0 {
		return h
	}
	h.Status, h.VelocityKnown, h.Samples = StatusOK, true, parts[0].Samples
	unknown := false
	for _, p := range parts {
		unknown = unknown || p.Status == StatusUnknown
		h.Status = max(h.Status, p.Status)
		h.Velocity += p.Velocity
		h.VelocityKnown = h.VelocityKnown && p.VelocityKnown
		h.Samples, h.Span = min(h.Samples, p.Samples), max(h.Span, p.Span)
		if p.HeadroomKnown && (!h.HeadroomKnown || p.Headroom < h.Headroom) {
			h.Headroom, h.HeadroomKnown = p.Headroom, true
		}
	}
	if unknown && h.Status == StatusOK {
		h.Status = StatusUnknown
	}
	if !h.VelocityKnown {
		h.Velocity = 0
	}
	if h.VelocityKnown && records > 0 && h.Velocity < 0 {
		h.Drain = float64(records) / -h.Velocity
	}
	return h
}
