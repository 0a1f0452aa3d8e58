// SPDX-License-Identifier: Apache-2.0

package runsummary

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kretrieve/kretrieve/ops/spans"
)

// Summary is a run's outcome. Its JSON keys are documented in docs/configuration.md.
type Summary struct {
	Requests        Requests      `json:"requests"`
	WallSeconds     float64       `json:"wall_seconds"`
	ThroughputPerS  float64       `json:"throughput_per_second"`
	EndToEndMS      Percentiles   `json:"end_to_end_ms"`
	Topics          []TopicStages `json:"topics"`
	Work            []Work        `json:"work"`
	SpansRecorded   int64         `json:"spans_recorded"`
	SpansDropped    int64         `json:"spans_dropped"`
	TracingDisabled bool          `json:"tracing_disabled,omitempty"`
	// Slowest is the slowest completed request: its trace id, duration and
	// the spans this process recorded of it. Nil when none completed.
	Slowest *spans.Trace `json:"slowest,omitempty"`
	// UntrackedTraces counts requests whose spans were not collected
	// because the in-flight cap was reached (they cannot be Slowest).
	UntrackedTraces int64 `json:"untracked_traces"`
	// TruncatedSpans counts spans not kept because their trace was at the
	// per-trace cap.
	TruncatedSpans int64 `json:"truncated_spans"`
}

// Requests counts what became of the requests.
type Requests struct {
	Sent       int   `json:"sent"`
	Completed  int   `json:"completed"`
	Failed     int   `json:"failed"`
	TimedOut   int   `json:"timed_out"`
	Duplicates int64 `json:"duplicates"`
}

// Percentiles of a latency distribution, in milliseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Work is the latency of spans of one name inside the process spans.
type Work struct {
	Span string      `json:"span"`
	MS   Percentiles `json:"ms"`
}

// TopicStages are the latencies of one topic's hop.
type TopicStages struct {
	Topic       string      `json:"topic"`
	SendMS      Percentiles `json:"send_ms"`
	QueueWaitMS Percentiles `json:"queue_wait_ms"`
	ProcessMS   Percentiles `json:"process_ms"`
}

func percentiles(h *hdrhistogram.Histogram) Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return Percentiles{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Percentiles{
		Count: h.TotalCount(),
		P50:   ms(h.ValueAtQuantile(50)),
		P95:   ms(h.ValueAtQuantile(95)),
		P99:   ms(h.ValueAtQuantile(99)),
		Max:   ms(h.Max()),
	}
}

// Summary builds the run summary: requests and wall time come from the
// caller, latencies from the recorded spans, in the order of topics and of
// work (span names).
func (r *Recorder) Summary(req Requests, wall time.Duration, topics, work []string) Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{
		Requests:        req,
		WallSeconds:     wall.Seconds(),
		EndToEndMS:      percentiles(r.e2e),
		SpansRecorded:   r.spans,
		Slowest:         r.slowest(),
		UntrackedTraces: r.untracked,
		TruncatedSpans:  r.truncated,
	}
	if wall > 0 {
		s.ThroughputPerS = float64(req.Completed) / wall.Seconds()
	}
	for _, t := range topics {
		s.Topics = append(s.Topics, TopicStages{
			Topic:       t,
			SendMS:      percentiles(r.stages[stageKey{t, StageSend}]),
			QueueWaitMS: percentiles(r.stages[stageKey{t, StageWait}]),
			ProcessMS:   percentiles(r.stages[stageKey{t, StageProcess}]),
		})
	}
	for _, name := range work {
		s.Work = append(s.Work, Work{Span: name, MS: percentiles(r.stages[stageKey{"", name}])})
	}
	return s
}

// WriteJSON writes s as indented JSON.
func (s Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteText writes s as a human-readable table, then the waterfall of the
// slowest request, spans.WaterfallWidth wide.
func (s Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "requests\tsent %d\tcompleted %d\tfailed %d\ttimed out %d\tduplicates %d\n",
		s.Requests.Sent, s.Requests.Completed, s.Requests.Failed, s.Requests.TimedOut, s.Requests.Duplicates)
	fmt.Fprintf(tw, "wall time\t%.2f s\tthroughput %.1f req/s\t\t\t\n", s.WallSeconds, s.ThroughputPerS)
	if s.TracingDisabled {
		fmt.Fprintln(tw, "tracing disabled (OTEL_SDK_DISABLED): no latency breakdown")
		return tw.Flush()
	}
	fmt.Fprintf(tw, "spans\trecorded %d\tdropped %d\t\t\t\n", s.SpansRecorded, s.SpansDropped)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "latency (ms)\tcount\tp50\tp95\tp99\tmax")
	row := func(name string, p Percentiles) {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\n", name, p.Count, p.P50, p.P95, p.P99, p.Max)
	}
	row("end-to-end", s.EndToEndMS)
	for _, t := range s.Topics {
		row("  send "+t.Topic, t.SendMS)
		row("  wait "+t.Topic, t.QueueWaitMS)
		row("  process "+t.Topic, t.ProcessMS)
	}
	for _, wk := range s.Work {
		row("  "+wk.Span, wk.MS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return WriteSlowest(w, s.Slowest, s.UntrackedTraces, spans.WaterfallWidth)
}

// WriteSlowest writes a heading and the waterfall of the slowest request;
// nothing when slowest is nil. untracked is Summary.UntrackedTraces.
func WriteSlowest(w io.Writer, slowest *spans.Trace, untracked int64, width int) error {
	if slowest == nil {
		return nil
	}
	note := ""
	if untracked > 0 {
		note = fmt.Sprintf(" (%d requests not tracked: in-flight cap)", untracked)
	}
	if _, err := fmt.Fprintf(w, "\nslowest request: trace %s  %.2f ms%s\n", slowest.TraceID, slowest.DurationMS, note); err != nil {
		return err
	}
	// The run's own spans, drawn once at its end: nothing to cancel.
	return spans.WriteWaterfall(context.Background(), w, slowest.Spans, width)
}
