package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kretrieve/kretrieve/loadcurve"
)

// sweepWarmup bounds a sweep's warm-up: this long at the first rate, or
// as many requests as the first rate sends in it, at most one step's worth.
const sweepWarmup = time.Second

// sweepStep is one rate of a sweep (a row of the report's "sweep"):
// the rate offered and the rate of completed requests over the step's
// wall time (its sending and the wait for its last outcomes), the
// latencies of its completed requests.
type sweepStep struct {
	OfferedPS   float64 `json:"rate_offered"`
	AchievedPS  float64 `json:"rate_achieved"`
	Sent        int64   `json:"sent"`
	Completed   int64   `json:"completed"`
	Errors      int64   `json:"errors"` // failed and timed out
	WallSeconds float64 `json:"wall_seconds"`
	EndToEndMS  latency `json:"end_to_end_ms"`
}

// parseSweep parses --sweep: positive rates separated by commas.
func parseSweep(s string) ([]int, error) {
	var rates []int
	for f := range strings.SplitSeq(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("sweep: %q is not a positive rate", strings.TrimSpace(f))
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// runSweep warms up at the first rate (not counted), then runs open loop
// at each rate of cfg.sweep in turn, --requests or --duration each, and
// records each step in rep.Sweep. It returns the steps together.
func runSweep(ctx context.Context, d *driver, cfg loadConfig, rep *loadReport) *phase {
	rep.Mode = "sweep, open loop at " + joinRates(cfg.sweep)
	first := cfg.sweep[0]
	warmup := d.drive(ctx, first, warmupRequests(first, cfg.requests, cfg.duration), min(cfg.duration, sweepWarmup))
	rep.WarmupRequests = warmup.sent
	total := newPhase()
	for _, rate := range cfg.sweep {
		if ctx.Err() != nil {
			break
		}
		p := d.drive(ctx, rate, cfg.requests, cfg.duration)
		total.add(p)
		rep.Sweep = append(rep.Sweep, sweepStep{
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

// writeSweep writes the steps as a table.
func writeSweep(w io.Writer, steps []sweepStep) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate_offered\trate_achieved\tp50 ms\tp99 ms\tp99.9 ms\terrors\t")
	for _, s := range steps {
		fmt.Fprintf(tw, "%.0f\t%.1f\t%.2f\t%.2f\t%.2f\t%d\t\n", s.OfferedPS, s.AchievedPS, s.EndToEndMS.P50, s.EndToEndMS.P99, s.EndToEndMS.P999, s.Errors)
	}
	return tw.Flush()
}

// writeCurve draws the sweep's latency curve to cfg.curve.
func writeCurve(cfg loadConfig, getenv func(string) string, rep loadReport, stderr io.Writer) error {
	c := loadcurve.Curve{Title: curveTitle(cfg, getenv)}
	for _, s := range rep.Sweep {
		c.Points = append(c.Points, loadcurve.Point{Offered: s.OfferedPS, Achieved: s.AchievedPS, P50: s.EndToEndMS.P50, P99: s.EndToEndMS.P99, P999: s.EndToEndMS.P999})
	}
	f, err := os.Create(cfg.curve)
	if err != nil {
		return fmt.Errorf("curve: %w", err)
	}
	err = loadcurve.WriteSVG(f, c)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("curve: %w", err)
	}
	fmt.Fprintf(stderr, "latency curve written to %s\n", cfg.curve)
	return nil
}

// curveTitle names the target and, when known, the sampling: the
// --curve-label, or in Kafka mode this process's (it starts each trace),
// from OTEL_SDK_DISABLED and OTEL_TRACES_SAMPLER[_ARG].
func curveTitle(cfg loadConfig, getenv func(string) string) string {
	target := "Kafka"
	if cfg.gatewayURL != "" {
		target = "gateway"
	}
	label := cfg.curveLabel
	if label == "" && cfg.gatewayURL == "" {
		label = samplingLabel(getenv)
	}
	title := "kretrieve load, latency under load: " + target
	if label != "" {
		title += ", " + label
	}
	return title
}

// samplingLabel describes the sampling the OTEL_* variables set, "" when
// they set none.
func samplingLabel(getenv func(string) string) string {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return "untraced"
	}
	sampler, arg := getenv("OTEL_TRACES_SAMPLER"), getenv("OTEL_TRACES_SAMPLER_ARG")
	switch {
	case sampler == "":
		return ""
	case strings.HasSuffix(sampler, "traceidratio") && arg != "":
		if r, err := strconv.ParseFloat(arg, 64); err == nil {
			return "traced " + strconv.FormatFloat(r*100, 'g', 4, 64) + "% (" + sampler + ")"
		}
	case strings.HasSuffix(sampler, "always_on"):
		return "traced 100% (" + sampler + ")"
	case strings.HasSuffix(sampler, "always_off"):
		return "traced 0% (" + sampler + ")"
	}
	return strings.TrimSpace(sampler + " " + arg)
}
