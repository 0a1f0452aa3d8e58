// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// sweepWarmup bounds a sweep's warm-up: this long at the first rate, or
// as many requests as the first rate sends in it, at most one step's worth.
const sweepWarmup = time.Second

// SweepStep is one rate of a sweep (a row of the report's "sweep"):
// the rate offered and the rate of completed requests over the step's
// wall time (its sending and the wait for its last outcomes), the
// latencies of its completed requests.
type SweepStep struct {
	OfferedPS   float64 `json:"rate_offered"`
	AchievedPS  float64 `json:"rate_achieved"`
	Sent        int64   `json:"sent"`
	Completed   int64   `json:"completed"`
	Errors      int64   `json:"errors"` // failed and timed out
	WallSeconds float64 `json:"wall_seconds"`
	EndToEndMS  Latency `json:"end_to_end_ms"`
}

// runSweep warms up at the first rate (not counted), then runs open loop
// at each rate of cfg.Sweep in turn, cfg.Requests or cfg.Duration each, and
// records each step in rep.Sweep. It returns the steps together.
func runSweep(ctx context.Context, d *driver, cfg Config, rep *Report) *phase {
	rep.Mode = "sweep, open loop at " + joinRates(cfg.Sweep)
	first := cfg.Sweep[0]
	warmup := d.drive(ctx, first, warmupRequests(first, cfg.Requests, cfg.Duration), min(cfg.Duration, sweepWarmup))
	rep.WarmupRequests = warmup.sent
	total := newPhase()
	for _, rate := range cfg.Sweep {
		if ctx.Err() != nil {
			break
		}
		p := d.drive(ctx, rate, cfg.Requests, cfg.Duration)
		total.add(p)
		rep.Sweep = append(rep.Sweep, SweepStep{
			OfferedPS: float64(rate), AchievedPS: p.throughput(),
			Sent: p.sent, Completed: p.completed, Errors: p.failed + p.timedOut,
			WallSeconds: p.wall.Seconds(), EndToEndMS: latencyOf(p.e2e),
		})
	}
	return total
}

// warmupRequests is the warm-up's request bound: what rate sends in
// sweepWarmup, at most a step's requests; 0 (no bound) when the steps are
// bounded by duration only.
func warmupRequests(rate, requests int, duration time.Duration) int {
	if requests <= 0 {
		return 0
	}
	return max(1, min(requests, int(float64(rate)*sweepWarmup.Seconds())))
}

func joinRates(rates []int) string {
	s := make([]string, len(rates))
	for i, r := range rates {
		s[i] = strconv.Itoa(r)
	}
	return strings.Join(s, ", ") + " req/s"
}
