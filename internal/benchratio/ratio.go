package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Target is one performance target: the ratio of a metric's medians in two
// benchmarks, compared with a bound.
type Target struct {
	// Label names the ratio in the table.
	Label string
	// Num and Den are benchmark names without the GOMAXPROCS suffix.
	Num, Den string
	// Unit is the metric compared ("msgs/s", "p99-µs", "req/s").
	Unit string
	// Bound is the target ratio; AtMost makes it an upper bound (for
	// latencies), otherwise it is a lower bound (for throughput).
	Bound  float64
	AtMost bool
}

// Targets are the targets of the issue "Performance", in the order printed.
var Targets = []Target{
	{Label: "relay kretrieve-100 / kotel", Num: "BenchmarkRelay/kretrieve-100", Den: "BenchmarkRelay/kotel", Unit: "msgs/s", Bound: 2.5},
	{Label: "relay kretrieve-1 / untraced", Num: "BenchmarkRelay/kretrieve-1", Den: "BenchmarkRelay/untraced", Unit: "msgs/s", Bound: 0.8},
	{Label: "paced p99 kretrieve-100 / untraced", Num: "BenchmarkRelayPaced/kretrieve-100", Den: "BenchmarkRelayPaced/untraced", Unit: "p99-µs", Bound: 1.05, AtMost: true},
	{Label: "pipeline kafka-traced-100 / kafka-untraced", Num: "BenchmarkPipeline/kafka-traced-100", Den: "BenchmarkPipeline/kafka-untraced", Unit: "req/s", Bound: 0.95},
	{Label: "pipeline kafka-traced-100 / inprocess", Num: "BenchmarkPipeline/kafka-traced-100", Den: "BenchmarkPipeline/inprocess", Unit: "req/s", Bound: 0.8},
}

// Status of one evaluated target.
const (
	Pass    = "PASS"
	Miss    = "MISS"
	Missing = "n/a"
)

// Outcome is a target evaluated against the medians of one output.
type Outcome struct {
	Target
	// Num and Den are the medians compared, Ratio their quotient; all
	// NaN when Status is Missing.
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
		if okNum && okDen && den != 0 {
			o.NumValue, o.DenValue, o.Ratio = num, den, num/den
			o.NumRuns, o.DenRuns = medians[t.Num].Runs, medians[t.Den].Runs
			o.Status = Miss
			if t.AtMost && o.Ratio <= t.Bound || !t.AtMost && o.Ratio >= t.Bound {
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
		if o.AtMost {
			bound = "≤ "
		}
		bound += fmt.Sprintf("%.2f", o.Bound)
		if o.Status == Missing {
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\t%s\tnot in the output: %s, %s\n", o.Label, o.Unit, bound, o.Status, o.Num, o.Den)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%s\t%s / %s (%d, %d)\n", o.Label, o.Unit, o.Ratio, bound, o.Status,
			number(o.NumValue), number(o.DenValue), o.NumRuns, o.DenRuns)
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
