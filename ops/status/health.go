// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"slices"
	"time"

	"github.com/kretrieve/kretrieve/lag"
)

// DefaultLagWindow is the span of reads a Source judges the lag's health
// over, when Config.LagWindow does not say.
const DefaultLagWindow = time.Minute

// LagHealth is a group's lag health on a topic, judged over the Source's
// reads of the last Config.LagWindow (lag.Tracker; the partitions' summed
// by lag.SumHealth): see docs/operations.md, "Lag health".
type LagHealth struct {
	// Status is ok, warn, stall, stop, rewind, or unknown with fewer than
	// lag.MinSamples reads in the window.
	Status lag.Status `json:"status"`
	// Samples is the reads in the window (the fewest of a partition's).
	Samples int `json:"samples"`
	// Velocity is the change of the lag, in records per second;
	// negative when it drains.
	Velocity Maybe[float64] `json:"velocity"`
	// Drain is the estimated time to drain the lag, in seconds; unknown
	// when the lag does not shrink.
	Drain Maybe[float64] `json:"drain_seconds"`
	// Headroom is the least time, in seconds, before an oldest unconsumed
	// record is due for deletion by its topic's retention.ms; unknown
	// without lag or with an infinite retention.
	Headroom Maybe[float64] `json:"retention_headroom_seconds"`
}

// healthOf is the LagHealth of a group's partitions on a topic, whose lag
// sums to records (-1: unknown).
func healthOf(parts []lag.PartitionLag, records int64) LagHealth {
	hs := make([]lag.Health, len(parts))
	for i, p := range parts {
		hs[i] = p.Health
	}
	h := lag.SumHealth(hs, records)
	out := LagHealth{Status: h.Status, Samples: h.Samples}
	if h.VelocityKnown {
		out.Velocity = Of(h.Velocity)
	}
	if h.Drain >= 0 {
		out.Drain = Of(h.Drain)
	}
	if h.HeadroomKnown {
		out.Headroom = Of(h.Headroom)
	}
	return out
}

// lagHealth keeps what the health of the groups' lag is judged from
// between a Source's reads.
type lagHealth struct {
	tracker    *lag.Tracker
	retentions *lag.Retentions
}

// newLagHealth returns the judge of cfg's groups.
func newLagHealth(cfg Config) *lagHealth {
	return &lagHealth{tracker: lag.NewTracker(cfg.LagWindow), retentions: lag.NewRetentions(cfg.KafkaOptions, 0)}
}

// judge adds the measurement lags, taken at at, to the window and sets
// each entry's Health. The topics' retention that could not be described
// leaves their headroom unknown; the error is returned.
func (j *lagHealth) judge(ctx context.Context, lags []lag.PartitionLag, at time.Time) error {
	var topics []string
	for _, l := range lags {
		if l.Topic != "" && !slices.Contains(topics, l.Topic) {
			topics = append(topics, l.Topic)
		}
	}
	var retention map[string]time.Duration
	var err error
	if len(topics) > 0 {
		retention, err = j.retentions.Get(ctx, topics)
	}
	for i, h := range j.tracker.Observe(at, lags, retention) {
		lags[i].Health = h
	}
	return err
}
