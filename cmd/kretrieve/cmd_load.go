// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/ops/loadcurve"
	"github.com/kretrieve/kretrieve/ops/loadgen"
	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/tracing"
)

// loadCommand is "kretrieve load".
func (e *cli) loadCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "load",
		GroupID: "tools",
		Short:   "Drive a running pipeline (Kafka or --gateway-url): throughput, latency, stages, errors",
		Long: `Drive a running pipeline through Kafka, or through the HTTP gateway with
--gateway-url, open loop at --rate or closed loop at --in-flight, and report
throughput, end-to-end latency, the per-stage breakdown and errors. It exits
non-zero when more than --max-error-rate of the requests sent fail (failed,
timed out or not delivered).`,
		Example: `  kretrieve load --requests 5000 --in-flight 64
  kretrieve load --rate 500 --duration 1m --gateway-url http://127.0.0.1:8080
  kretrieve load --sweep 100,200,400 --curve curve.svg
  kretrieve load --json --max-error-rate 0.01 > report.json`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c loadConfig) error { return runLoad(ctx, c, e.getenv, e.stdout, e.stderr) }))
}

// loadConfig configures the load command.
type loadConfig struct {
	commonConfig
	rate       int
	inFlight   int
	requests   int
	duration   time.Duration
	timeout    time.Duration
	json       bool
	gatewayURL string
	// maxErrorRate is the largest share of failed or timed-out requests
	// (of those sent) with which load exits 0.
	maxErrorRate float64
	// sweep, curve and curveLabel: see cmd_load_sweep.go.
	sweep      []int
	curve      string
	curveLabel string
	spans      spansFileFlags
	// pathways: in Kafka mode, the requests' pathways are published (in
	// gateway mode the gateway publishes them).
	pathways pathwaysFlags
}

// flags declares the flags of a loadConfig on s and returns the check of
// their values, run once they are parsed.
func (c *loadConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "load", kafkaclient.DefaultBrokers)
	s.str(&c.gatewayURL, "gateway-url", "", "drive the HTTP gateway at this base URL (POST /v1/search, e.g. http://127.0.0.1:8080) instead of Kafka")
	s.integer(&c.rate, "rate", 0, "open loop: requests per second (0: closed loop at --in-flight)")
	s.integer(&c.inFlight, "in-flight", 64, "closed loop: requests awaiting their result at once; open loop: the most allowed before sending waits")
	s.integer(&c.requests, "requests", 10000, "requests to send (0: until --duration)")
	s.duration(&c.duration, "duration", 0, "stop sending after this long (0: until --requests)")
	s.duration(&c.timeout, "timeout", 30*time.Second, "how long to wait for each result (gateway mode: for each HTTP response)")
	s.boolean(&c.json, "json", false, "print the report as JSON")
	s.float(&c.maxErrorRate, "max-error-rate", 0, "exit non-zero when more than this share of the requests sent fail or time out (0.01: 1 %; 0: any failure)")
	var sweep string
	s.str(&sweep, "sweep", "", "rate sweep: open loop at each of these requests per second in turn (e.g. 100,200,400), --requests or --duration each, after a warm-up")
	s.str(&c.curve, "curve", "", "with --sweep: write the latency curve (p50, p99, p99.9 against achieved throughput) to this SVG FILE (-: stdout)")
	s.str(&c.curveLabel, "curve-label", "", "with --sweep: added to the curve's title, e.g. the gateway's sampling (default: this process's OTEL_* sampling)")
	c.spans.declare(s)
	c.pathways.declare(s)
	return func(args []string) error {
		var errs []error
		if sweep != "" {
			rates, err := parseSweep(sweep)
			errs = append(errs, err)
			c.sweep = rates
			if c.rate > 0 {
				errs = append(errs, errors.New("give --rate or --sweep, not both"))
			}
		} else if c.curve != "" {
			errs = append(errs, errors.New("--curve needs --sweep"))
		}
		if c.requests <= 0 && c.duration <= 0 {
			errs = append(errs, errors.New("give --requests or --duration"))
		}
		if c.maxErrorRate < 0 || c.maxErrorRate > 1 {
			errs = append(errs, errors.New("max-error-rate: must be between 0 and 1"))
		}
		errs = append(errs, checkStdout("spans-file", c.spans.path, "curve", c.curve))
		if c.rate < 0 || c.inFlight < 1 || c.timeout <= 0 {
			errs = append(errs, errors.New("rate must not be negative; in-flight and timeout must be positive"))
		}
		if c.gatewayURL != "" {
			if u, err := url.Parse(c.gatewayURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, fmt.Errorf("gateway-url: %q is not an http(s) URL", c.gatewayURL))
			}
		}
		return errors.Join(append(errs, c.validate(), validateBrokers(c.brokers), c.spans.validate(), c.pathways.validate())...)
	}
}

// loadReport is what `kretrieve load` prints; its JSON keys are documented in docs/performance.md.
type loadReport = loadgen.Report

// runLoad drives a running pipeline with package loadgen, through Kafka or
// through the HTTP gateway (--gateway-url), open loop at --rate or closed
// loop at --in-flight, and reports throughput, end-to-end latency (HDR
// histograms), the per-stage breakdown from the results' timings (queue
// wait vs work on each hop), errors by HTTP status (gateway), dropped
// spans, peak consumer lag (Kafka) and the slowest request's spans. With
// --sweep it runs open loop at each rate in turn and adds a row per rate,
// and draws their latency curve with --curve.
func runLoad(ctx context.Context, cfg loadConfig, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	recorder := cfg.spans.recorder()
	cmd := command{role: "load", telemetry: []tracing.Option{tracing.WithSpanProcessor(recorder)}}
	if cfg.gatewayURL == "" {
		cmd.connect = ensureTopics
	}
	return cmd.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) (err error) {
		var target loadgen.Target
		if cfg.gatewayURL != "" {
			target = loadgen.NewGatewayTarget(loadgen.GatewayConfig{URL: cfg.gatewayURL, InFlight: cfg.inFlight, Timeout: cfg.timeout, Telemetry: comp.telemetry})
		} else {
			client, err := p.NewClient(ctx, true)
			if err != nil {
				return err
			}
			target = loadgen.NewKafkaTarget(client, loadgen.KafkaConfig{Brokers: cfg.brokers, Timeout: cfg.timeout, LagOptions: kafkaOptions(p, nil), LagGroups: p.Topology().Groups()})
			defer publishPathways(ctx, cfg.pathways, p, comp, nil)()
		}

		rep, err := loadgen.Run(ctx, loadgen.Config{
			Rate: cfg.rate, InFlight: cfg.inFlight, Requests: cfg.requests, Duration: cfg.duration, Sweep: cfg.sweep,
			Queries: demoQueryList(), Progress: stderr,
		}, target)
		err = errors.Join(err, comp.shutdown(defaultFlushTimeout))
		rep.DroppedSpans = comp.telemetry.Stats().Dropped
		spans := recorder.Summary(runsummary.Requests{}, time.Duration(rep.WallSeconds*float64(time.Second)), nil, nil)
		rep.Slowest, rep.UntrackedTraces = spans.Slowest, spans.UntrackedTraces
		err = errors.Join(err, cfg.spans.save(recorder, stdout, stderr))
		report := reportWriter(stdout, stderr, cfg.spans.path, cfg.curve)
		if cfg.json {
			enc := json.NewEncoder(report)
			enc.SetIndent("", "  ")
			err = errors.Join(err, enc.Encode(rep))
		} else {
			err = errors.Join(err, writeLoadReport(report, rep, cfg.topology().Names()))
		}
		if cfg.curve != "" {
			err = errors.Join(err, writeCurve(cfg, getenv, rep, stdout, stderr))
		}
		if rate := rep.FailureRate(); rate > cfg.maxErrorRate {
			err = errors.Join(err, fmt.Errorf("%d of %d requests failed or timed out (%.2f%%), above --max-error-rate %g", rep.Failures(), rep.Sent, 100*rate, cfg.maxErrorRate))
		}
		return err
	})
}

// writeLoadReport prints the report as tables: the counts, the sweep's
// steps, the latencies, and the slowest request's waterfall.
func writeLoadReport(w io.Writer, r loadReport, stages []string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "mode\t%s\n", r.Mode)
	fmt.Fprintf(tw, "target\t%s\n", r.Target)
	fmt.Fprintf(tw, "requests\tsent %d\tcompleted %d\tfailed %d\ttimed out %d\tduplicates %d\n", r.Sent, r.Completed, r.Failed, r.TimedOut, r.Duplicates)
	if len(r.ErrorsByStatus) > 0 || r.TransportErrors > 0 {
		codes := slices.Sorted(maps.Keys(r.ErrorsByStatus))
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%d: %d", c, r.ErrorsByStatus[c]))
		}
		if r.TransportErrors > 0 {
			parts = append(parts, fmt.Sprintf("no answer: %d", r.TransportErrors))
		}
		fmt.Fprintf(tw, "http errors\t%s\n", strings.Join(parts, "  "))
	}
	fmt.Fprintf(tw, "throughput\t%.1f req/s\tover %.2f s\n", r.ThroughputPS, r.WallSeconds)
	fmt.Fprintf(tw, "dropped spans\t%d\n", r.DroppedSpans)
	if strings.HasPrefix(r.Target, "kafka") {
		fmt.Fprintf(tw, "peak lag\t%d records\t%.1f s\n", r.PeakLag, r.PeakLagSecond)
	}
	fmt.Fprintln(tw)
	if len(r.Sweep) > 0 {
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := writeSweep(w, r.Sweep); err != nil {
			return err
		}
		fmt.Fprintf(tw, "\nall steps (warm-up of %d requests left out)\n", r.WarmupRequests)
	}
	fmt.Fprintln(tw, "latency (ms)\tp50\tp95\tp99\tp99.9\tmax")
	row := func(name string, l loadgen.Latency) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", name, l.P50, l.P95, l.P99, l.P999, l.Max)
	}
	row("end-to-end", r.EndToEndMS)
	for _, st := range loadgen.StageKeys(stages) {
		row("  "+strings.ReplaceAll(st, "_", " "), r.Stages[st])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := runsummary.WriteSlowest(w, r.Slowest, r.UntrackedTraces, spans.WaterfallWidth); err != nil || r.Slowest == nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(spans of this process only; the pipeline's spans: kretrieve trace --jaeger-url URL %s)\n", r.Slowest.TraceID)
	return err
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

// writeSweep writes the steps as a table.
func writeSweep(w io.Writer, steps []loadgen.SweepStep) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate_offered\trate_achieved\tp50 ms\tp99 ms\tp99.9 ms\terrors\t")
	for _, s := range steps {
		fmt.Fprintf(tw, "%.0f\t%.1f\t%.2f\t%.2f\t%.2f\t%d\t\n", s.OfferedPS, s.AchievedPS, s.EndToEndMS.P50, s.EndToEndMS.P99, s.EndToEndMS.P999, s.Errors)
	}
	return tw.Flush()
}

// writeCurve draws the sweep's latency curve to cfg.curve ("-": stdout).
func writeCurve(cfg loadConfig, getenv func(string) string, rep loadReport, stdout, stderr io.Writer) error {
	c := loadcurve.Curve{Title: curveTitle(cfg, getenv)}
	for _, s := range rep.Sweep {
		c.Points = append(c.Points, loadcurve.Point{Offered: s.OfferedPS, Achieved: s.AchievedPS, P50: s.EndToEndMS.P50, P99: s.EndToEndMS.P99, P999: s.EndToEndMS.P999})
	}
	f, err := createOutput(cfg.curve, stdout)
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
	fmt.Fprintf(stderr, "latency curve written to %s\n", outputName(cfg.curve))
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
