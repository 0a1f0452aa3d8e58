// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"strconv"
	"time"

	"github.com/kretrieve/kretrieve/lag"
)

// defaultLagWindow is the default of `lag --window`: kretrieve's workers
// commit every 100 ms, so 3 measurements over 2 s tell a stalled group
// from a live one.
const defaultLagWindow = 2 * time.Second

// monitorConfig is the lag Monitor of c: its health window is, once,
// twice --window (the 3 measurements span it, and a little more), and
// with --watch the longer of --window and 10 measurements.
func (c lagConfig) monitorConfig() lag.MonitorConfig {
	mc := lag.MonitorConfig{Groups: c.groups, Interval: c.watch, Window: 2 * c.window}
	if c.watch > 0 {
		mc.Window = max(c.window, 10*c.watch)
	}
	if mc.Window == 0 {
		mc.Window = time.Second // one measurement: any window
	}
	return mc
}

// sampleLag measures with mon: with --watch, or without a --window, once;
// else lag.MinSamples times spread over the window (the first at once,
// the last at its end), returning the last, which carries the health
// judged over them.
func sampleLag(ctx context.Context, mon *lag.Monitor, cfg lagConfig) ([]lag.PartitionLag, error) {
	n := lag.MinSamples
	if cfg.watch > 0 || cfg.window == 0 {
		n = 1
	}
	start := time.Now()
	for i := 0; ; i++ {
		lags, err := mon.Update(ctx)
		if err != nil || i == n-1 {
			return lags, err
		}
		t := time.NewTimer(time.Until(start.Add(cfg.window * time.Duration(i+1) / time.Duration(n-1))))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// healthHeader are the table columns of healthCells.
const healthHeader = "STATUS\tVELOCITY(/s)\tDRAIN(s)\tHEADROOM(s)"

// healthCells formats h as the columns of healthHeader, "-" for what is
// unknown.
func healthCells(h lag.Health) string {
	velocity, headroom := "-", "-"
	if h.VelocityKnown {
		velocity = strconv.FormatFloat(h.Velocity, 'f', 1, 64)
	}
	if h.HeadroomKnown {
		headroom = strconv.FormatFloat(h.Headroom, 'f', 1, 64)
	}
	return h.Status.String() + "\t" + velocity + "\t" + secondsCell(h.Drain) + "\t" + headroom
}

// sumHealth is the health of a group on a topic (lag.SumHealth).
func sumHealth(parts []lag.PartitionLag, records int64) lag.Health {
	hs := make([]lag.Health, len(parts))
	for i, p := range parts {
		hs[i] = p.Health
	}
	return lag.SumHealth(hs, records)
}

// healthFields are the health of a group's partition in `lag --json`:
// status always, the numbers absent when unknown.
type healthFields struct {
	Status          string   `json:"status,omitempty"`
	Samples         int      `json:"samples,omitempty"`
	Velocity        *float64 `json:"velocity,omitempty"`
	DrainSeconds    *float64 `json:"drain_seconds,omitempty"`
	HeadroomSeconds *float64 `json:"retention_headroom_seconds,omitempty"`
}

// newHealthFields returns the JSON fields of h.
func newHealthFields(h lag.Health) healthFields {
	f := healthFields{Status: h.Status.String(), Samples: h.Samples}
	if h.VelocityKnown {
		f.Velocity = &h.Velocity
	}
	if h.Drain >= 0 {
		f.DrainSeconds = &h.Drain
	}
	if h.HeadroomKnown {
		f.HeadroomSeconds = &h.Headroom
	}
	return f
}
