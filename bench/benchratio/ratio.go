// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// Target is one performance target: the ratio of a metric's medians in two
// benchmarks, or one benchmark's median, compared with a bound.
type Target struct {
	// Label names the ratio in the table.
	Label string
	// Num and Den are benchmark names without the GOMAXPROCS suffix. An
	// empty Den makes the target absolute: Num's median itself is
	// compared with Bound.
	Num, Den string
	// Unit is the metric compared ("msgs/s", "p99-µs", "req/s",
	// "ns/checkpoint", "allocs/op").
	Unit string
	// Bound is the target ratio, or value for an absolute target; AtMost
	// makes it an upper bound (for latencies and costs), otherwise it is
	// a lower bound (for throughput).
	Bound  float64
	AtMost bool
	// Strict makes the bound strict: the value must be below it (with
	// AtMost) or above it, not equal.
	Strict bool
	// Hops makes the target a difference shared out: (Num's median −
	// Den's median) / Hops, compared with Bound as an absolute value (what
	// each Kafka hop adds to a request, say).
	Hops int
	// Info makes the target informational: its value is printed, with no
	// bound and the status Info.
	Info bool
}

// Absolute reports whether the target bounds one median, not a ratio.
func (t Target) Absolute() bool { return t.Den == "" }

// Targets are the targets of the issues "Performance" and "Cost" (issue
// 11, item 5), the idle latency of issues 12 (item 5) and 28 (item 4), and
// the live documents of issue 24, item 6, in the order printed.
var Targets = []Target{
	{Label: "relay kretrieve-100 / kotel", Num: "BenchmarkRelay/kretrieve-100", Den: "BenchmarkRelay/kotel", Unit: "msgs/s", Bound: 2.5},
	{Label: "relay kretrieve-1 / untraced", Num: "BenchmarkRelay/kretrieve-1", Den: "BenchmarkRelay/untraced", Unit: "msgs/s", Bound: 0.8},
	{Label: "paced p99 kretrieve-100 / untraced", Num: "BenchmarkRelayPaced/kretrieve-100", Den: "BenchmarkRelayPaced/untraced", Unit: "p99-µs", Bound: 1.05, AtMost: true},
	{Label: "pipeline kafka-traced-100 / kafka-untraced", Num: "BenchmarkPipeline/kafka-traced-100", Den: "BenchmarkPipeline/kafka-untraced", Unit: "req/s", Bound: 0.95},
	{Label: "pipeline kafka-traced-100 / inprocess", Num: "BenchmarkPipeline/kafka-traced-100", Den: "BenchmarkPipeline/inprocess", Unit: "req/s", Bound: 0.8},
	{Label: "relay kretrieve-1-pathways / untraced", Num: "BenchmarkRelay/kretrieve-1-pathways", Den: "BenchmarkRelay/untraced", Unit: "msgs/s", Bound: 0.9},
	{Label: "relay kretrieve-0-pathways / untraced", Num: "BenchmarkRelay/kretrieve-0-pathways", Den: "BenchmarkRelay/untraced", Unit: "msgs/s", Bound: 0.93},
	{Label: "paced pipeline p99 pathways on / off", Num: "BenchmarkPipelinePaced/kafka-traced-1", Den: "BenchmarkPipelinePaced/kafka-traced-1-nopathways", Unit: "p99-µs", Bound: 1.03, AtMost: true},
	{Label: "span end, idle console / without", Num: "BenchmarkSpanEnd/idle-console", Den: "BenchmarkSpanEnd/without", Unit: "ns/op", Bound: 1.05, AtMost: true},
	{Label: "console span store retained, 4× / 1× its bound", Num: "BenchmarkStoreRetained/spans-15/fill-4x", Den: "BenchmarkStoreRetained/spans-15/fill-1x", Unit: "retained-MiB", Bound: 1.05, AtMost: true},
	{Label: "console span store retained at its bound, 15-span traces", Num: "BenchmarkStoreRetained/spans-15/fill-1x", Unit: "retained-MiB", Info: true},
	{Label: "console span store retained at its bound, 256-span traces", Num: "BenchmarkStoreRetained/spans-256/fill-1x", Unit: "retained-MiB", Info: true},
	{Label: "pathway checkpoint in", Num: "BenchmarkCheckpointIn", Unit: "ns/checkpoint", Bound: 100, AtMost: true},
	{Label: "pathway checkpoint out", Num: "BenchmarkCheckpointOut", Unit: "ns/checkpoint", Bound: 100, AtMost: true},
	{Label: "pathway checkpoint in", Num: "BenchmarkCheckpointIn", Unit: "allocs/op", Bound: 0, AtMost: true},
	{Label: "pathway checkpoint out", Num: "BenchmarkCheckpointOut", Unit: "allocs/op", Bound: 0, AtMost: true},
	{Label: "unsampled hop, kafkatrace hooks", Num: "BenchmarkUnsampledHooks/pathways", Unit: "allocs/op", Bound: 0, AtMost: true},
	// Issue 26: counting every record by origin time (completeness).
	{Label: "origin-time count per record", Num: "BenchmarkCohortsRecord/serial", Unit: "ns/op", Bound: 50, AtMost: true},
	{Label: "origin-time count per record, all Ps on one bin", Num: "BenchmarkCohortsRecord/parallel", Unit: "ns/op", Bound: 50, AtMost: true},
	{Label: "origin-time count per record", Num: "BenchmarkCohortsRecord/serial", Unit: "allocs/op", Bound: 0, AtMost: true},
	// Issue 26: the deadline check per record (against a Kafka hop's
	// hundreds of µs: BenchmarkIdleLatency).
	{Label: "deadline check per record, with a deadline", Num: "BenchmarkDeadlineCheck/with", Unit: "ns/op", Bound: 100, AtMost: true},
	{Label: "deadline check per record, none", Num: "BenchmarkDeadlineCheck/none", Unit: "ns/op", Info: true},
	{Label: "deadline check per record, with a deadline", Num: "BenchmarkDeadlineCheck/with", Unit: "allocs/op", Bound: 0, AtMost: true},
	{Label: "idle p50 kafka / inprocess", Num: "BenchmarkIdleLatency/kafka", Den: "BenchmarkIdleLatency/inprocess", Unit: "p50-µs", Info: true},
	{Label: "idle p50 gateway / inprocess", Num: "BenchmarkIdleLatency/gateway", Den: "BenchmarkIdleLatency/inprocess", Unit: "p50-µs", Info: true},
	{Label: "idle p50 per Kafka hop, (kafka − inprocess) / 3", Num: "BenchmarkIdleLatency/kafka", Den: "BenchmarkIdleLatency/inprocess", Unit: "p50-µs", Hops: 3, Bound: 300, AtMost: true},
	// Issue 28, item 4: the idle Kafka path against the in-process work
	// served beside it in the same run (BenchmarkIdleLatency's paired
	// metrics): what the three hops add to the p50 per hop, and to the
	// work's own tail.
	{Label: "idle p50 per Kafka hop, same run", Num: "BenchmarkIdleLatency/kafka", Unit: "hop-p50-µs", Bound: 300, AtMost: true},
	{Label: "idle p99, Kafka − in-process", Num: "BenchmarkIdleLatency/kafka", Unit: "p99-over-inproc-ms", Bound: 1.5, AtMost: true},
	{Label: "idle p99, gateway − in-process", Num: "BenchmarkIdleLatency/gateway", Unit: "p99-over-inproc-ms", Info: true},
	{Label: "idle p99 / p50 kafka", Num: "BenchmarkIdleLatency/kafka", Unit: "p99/p50", Bound: 1.5, AtMost: true},
	{Label: "idle p99 / p50 gateway", Num: "BenchmarkIdleLatency/gateway", Unit: "p99/p50", Bound: 1.5, AtMost: true},
	{Label: "idle p99 / p50 inprocess, the work's own", Num: "BenchmarkIdleLatency/inprocess", Unit: "p99/p50", Info: true},
	// Issue 24, item 6: documents through Kafka into a worker's index.
	{Label: "ingest through Kafka / offline build, Go corpus", Num: "BenchmarkIngest/kafka", Den: "BenchmarkIngest/offline", Unit: "docs/s", Bound: 0.8},
	{Label: "catch-up of 100k documents / offline build", Num: "BenchmarkIngest/kafka-100k", Den: "BenchmarkIngest/offline-100k", Unit: "s", Bound: 1.5, AtMost: true},
	{Label: "catch-up of 100k documents, peak heap growth", Num: "BenchmarkIngest/kafka-100k", Unit: "peak-MiB", Info: true},
	{Label: "freshness p50, idle", Num: "BenchmarkFreshness/idle", Unit: "p50-ms", Bound: 20, AtMost: true},
	{Label: "freshness p99, idle", Num: "BenchmarkFreshness/idle", Unit: "p99-ms", Bound: 100, AtMost: true},
	{Label: "freshness p50, 500 documents/s", Num: "BenchmarkFreshness/500-per-s", Unit: "p50-ms", Info: true},
	{Label: "freshness p99, 500 documents/s", Num: "BenchmarkFreshness/500-per-s", Unit: "p99-ms", Info: true},
	{Label: "search p99 ingesting 500/s / idle", Num: "BenchmarkSearchWhileIngesting/ingesting", Den: "BenchmarkSearchWhileIngesting/idle", Unit: "p99-µs", Bound: 1.25, AtMost: true},
	{Label: "restarted worker ready, index current", Num: "BenchmarkRestartReady", Unit: "ms", Bound: 2000, AtMost: true},
	// Issue 27, item 8: the hand-written parts against the OpenTelemetry
	// SDK doing the same (each benchmark runs both side by side; their
	// equivalence tests sit beside them).
	{Label: "messaging metrics per record, kretrieve / SDK", Num: "BenchmarkMessagingMetrics/kretrieve", Den: "BenchmarkMessagingMetrics/sdk", Unit: "ns/op", Bound: 0.25, AtMost: true},
	{Label: "messaging metrics per record, kretrieve", Num: "BenchmarkMessagingMetrics/kretrieve", Unit: "allocs/op", Bound: 0, AtMost: true},
	{Label: "pathway histogram record, kretrieve / SDK", Num: "BenchmarkPathwayHistogram/kretrieve", Den: "BenchmarkPathwayHistogram/sdk", Unit: "ns/op", Bound: 0.5, AtMost: true},
	{Label: "pathway histogram record, kretrieve", Num: "BenchmarkPathwayHistogram/kretrieve", Unit: "allocs/op", Bound: 0, AtMost: true},
	{Label: "OTLP/JSON metric export / SDK's protobuf", Num: "BenchmarkOTLPMetricExport/kretrieve-json", Den: "BenchmarkOTLPMetricExport/sdk-protobuf", Unit: "ns/op", Info: true},
	{Label: "OTLP/JSON log export / SDK's protobuf", Num: "BenchmarkOTLPLogExport/kretrieve-json", Den: "BenchmarkOTLPLogExport/sdk-protobuf", Unit: "ns/op", Info: true},
	{Label: "Tracer.Inject / the library's propagators", Num: "BenchmarkInject/span/kretrieve", Den: "BenchmarkInject/span/library", Unit: "allocs/op", Bound: 1, AtMost: true},
	// Issue 28: kretrieve against its peers at production sampling, the
	// CPU of the client process alone per record, the broker in a process
	// of its own (bench/peers BenchmarkPeers, side by side).
	{Label: "client CPU, broker apart: kretrieve-1-pathways / untraced", Num: "BenchmarkPeers/kretrieve-1-pathways", Den: "BenchmarkPeers/untraced", Unit: "client-cpu-µs/msg", Bound: 1.15, AtMost: true},
	{Label: "client CPU, broker apart: kretrieve-0-pathways / untraced", Num: "BenchmarkPeers/kretrieve-0-pathways", Den: "BenchmarkPeers/untraced", Unit: "client-cpu-µs/msg", Bound: 1.10, AtMost: true},
	{Label: "client CPU, broker apart: kretrieve-1-pathways / kotel-1", Num: "BenchmarkPeers/kretrieve-1-pathways", Den: "BenchmarkPeers/kotel-1", Unit: "client-cpu-µs/msg", Bound: 1, AtMost: true, Strict: true},
	{Label: "client CPU, broker apart: kretrieve-1-pathways / dsm", Num: "BenchmarkPeers/kretrieve-1-pathways", Den: "BenchmarkPeers/dsm", Unit: "client-cpu-µs/msg", Bound: 1, AtMost: true},
	{Label: "client CPU, broker apart: kretrieve-0-pathways / dsm", Num: "BenchmarkPeers/kretrieve-0-pathways", Den: "BenchmarkPeers/dsm", Unit: "client-cpu-µs/msg", Bound: 1, AtMost: true},
	{Label: "client CPU, broker apart: kotel-1 / untraced", Num: "BenchmarkPeers/kotel-1", Den: "BenchmarkPeers/untraced", Unit: "client-cpu-µs/msg", Info: true},
	{Label: "client CPU, broker apart: kotel-0 / untraced", Num: "BenchmarkPeers/kotel-0", Den: "BenchmarkPeers/untraced", Unit: "client-cpu-µs/msg", Info: true},
	{Label: "client CPU, broker apart: dsm / untraced", Num: "BenchmarkPeers/dsm", Den: "BenchmarkPeers/untraced", Unit: "client-cpu-µs/msg", Info: true},
	{Label: "Tracer.Inject / the library's, with tracestate and baggage", Num: "BenchmarkInject/span+state+baggage/kretrieve", Den: "BenchmarkInject/span+state+baggage/library", Unit: "allocs/op", Bound: 1, AtMost: true},
}

// met reports whether value meets the target's bound.
func (t Target) met(value float64) bool {
	switch {
	case t.AtMost && t.Strict:
		return value < t.Bound
	case t.AtMost:
		return value <= t.Bound
	case t.Strict:
		return value > t.Bound
	default:
		return value >= t.Bound
	}
}

// Status of one evaluated target.
const (
	Pass    = "PASS"
	Miss    = "MISS"
	Missing = "n/a"
	Info    = "info"
)

// Outcome is a target evaluated against the medians of one output.
type Outcome struct {
	Target
	// Num and Den are the medians compared, Ratio their quotient (Num's
	// median itself for an absolute target, whose DenValue is NaN; their
	// difference over Hops for a target with Hops); all NaN when Status
	// is Missing.
	NumValue, DenValue, Ratio float64
	// NumRuns and DenRuns count the runs behind each median.
	NumRuns, DenRuns int
	Status           string
}

// Evaluate computes every target from the medians.
func Evaluate(medians map[string]Summary, targets []Target) []Outcome {
	out := make([]Outcome, 0, len(targets))
	for _, t := range targets {
		o := Outcome{Target: t, NumValue: math.NaN(), DenValue: math.NaN(), Ratio: math.NaN(), Status: Missing}
		num, okNum := medians[t.Num].Median[t.Unit]
		den, okDen := medians[t.Den].Median[t.Unit]
		switch {
		case okNum && t.Absolute():
			o.NumValue, o.Ratio, o.NumRuns = num, num, medians[t.Num].Runs
		case okNum && okDen && t.Hops > 0:
			o.NumValue, o.DenValue, o.Ratio = num, den, (num-den)/float64(t.Hops)
			o.NumRuns, o.DenRuns = medians[t.Num].Runs, medians[t.Den].Runs
		case okNum && okDen && den != 0:
			o.NumValue, o.DenValue, o.Ratio = num, den, num/den
			o.NumRuns, o.DenRuns = medians[t.Num].Runs, medians[t.Den].Runs
		}
		if !math.IsNaN(o.Ratio) && t.Info {
			o.Status = Info
		} else if !math.IsNaN(o.Ratio) {
			o.Status = Miss
			if t.met(o.Ratio) {
				o.Status = Pass
			}
		}
		out = append(out, o)
	}
	return out
}

// Print writes the outcomes as a table.
func Print(w io.Writer, outcomes []Outcome) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ratio\tmetric\tvalue\ttarget\tresult\tmedians (runs)")
	for _, o := range outcomes {
		bound := "≥ "
		switch {
		case o.AtMost && o.Strict:
			bound = "< "
		case o.AtMost:
			bound = "≤ "
		case o.Strict:
			bound = "> "
		}
		switch {
		case o.Info:
			bound = "-"
		case o.Absolute() || o.Hops > 0:
			bound += strconv.FormatFloat(o.Bound, 'g', -1, 64)
		default:
			bound += fmt.Sprintf("%.2f", o.Bound)
		}
		switch {
		case o.Status == Missing && o.Absolute():
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\t%s\tnot in the output: %s\n", o.Label, o.Unit, bound, o.Status, o.Num)
		case o.Status == Missing:
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\t%s\tnot in the output: %s, %s\n", o.Label, o.Unit, bound, o.Status, o.Num, o.Den)
		case o.Absolute():
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s (%d)\n", o.Label, o.Unit, number(o.Ratio), bound, o.Status,
				o.Num, o.NumRuns)
		case o.Hops > 0:
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t(%s − %s) / %d (%d, %d)\n", o.Label, o.Unit, number(o.Ratio), bound, o.Status,
				number(o.NumValue), number(o.DenValue), o.Hops, o.NumRuns, o.DenRuns)
		default:
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%s\t%s / %s (%d, %d)\n", o.Label, o.Unit, o.Ratio, bound, o.Status,
				number(o.NumValue), number(o.DenValue), o.NumRuns, o.DenRuns)
		}
	}
	return tw.Flush()
}

// number formats a median with about four significant digits.
func number(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
