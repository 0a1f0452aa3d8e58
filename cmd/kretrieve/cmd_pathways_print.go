// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathway"
)

// pathwaysReport is what `kretrieve pathways` prints, a rendering of a
// status.Status: the document of --json, whose unknown numbers are null.
type pathwaysReport struct {
	Time      time.Time         `json:"time"`
	Topic     string            `json:"topic"`
	Instances []pathwayInstance `json:"instances"`
	Pathways  []pathwayRow      `json:"pathways"`
	Edges     []pathwayEdge     `json:"edges"`
	Stages    []pathwayStage    `json:"stages"`
	Indexes   []pathwayIndex    `json:"indexes"`
	// Completeness is status.Completeness's own JSON form, the console's.
	Completeness status.Completeness `json:"completeness"`
	Skipped      map[string]uint64   `json:"skipped,omitempty"`
	Errors       []string            `json:"errors,omitempty"`
}

// pathwayInstance is one process's newest window.
type pathwayInstance struct {
	Instance        string    `json:"instance"`
	Service         string    `json:"service"`
	WindowStart     time.Time `json:"window_start"`
	WindowEnd       time.Time `json:"window_end"`
	IntervalSeconds float64   `json:"interval_seconds"`
	Series          int       `json:"series"`
	Stale           bool      `json:"stale"`
	// Late says the window's rates are not current: the process stopped,
	// or its next window is overdue.
	Late bool `json:"late"`
}

// pathwayRow is one pathway checkpoint over the instances' windows.
type pathwayRow struct {
	Hash      string `json:"hash"`
	Parent    string `json:"parent"`
	Depth     int    `json:"depth"`
	Edge      string `json:"edge"`
	Service   string `json:"service"`
	Group     string `json:"group,omitempty"`
	Topic     string `json:"topic"`
	Direction string `json:"direction"`
	// Overflow marks the series of the pathways beyond a process's bound.
	Overflow bool `json:"overflow,omitempty"`
	// Count is the records in the windows, Total since the processes
	// started.
	Count         uint64  `json:"count"`
	Total         uint64  `json:"total"`
	MsgsPerSecond float64 `json:"msgs_per_second"`
	Instances     int     `json:"instances"`
	// Late is how many of them have late windows (rates not current).
	Late          int              `json:"late,omitempty"`
	EdgeLatency   status.Quantiles `json:"edge_ms"`
	OriginLatency status.Quantiles `json:"origin_ms"`
}

// pathwayEdge is one pipeline topic: the records its consuming stage read
// (status.Edge).
type pathwayEdge struct {
	Topic         string           `json:"topic"`
	From          string           `json:"from"`
	To            string           `json:"to"`
	MsgsPerSecond float64          `json:"msgs_per_second"`
	EdgeLatency   status.Quantiles `json:"edge_ms"`
	OriginLatency status.Quantiles `json:"origin_ms"`
}

// pathwayStage is one pipeline topic: the lag of a group consuming it and
// the dead letters of the stage consuming it; null where unknown (see
// error), and for the results topic, which no stage consumes.
type pathwayStage struct {
	Topic       string                `json:"topic"`
	Group       string                `json:"group,omitempty"`
	Lag         status.Maybe[int64]   `json:"lag"`
	LagSeconds  status.Maybe[float64] `json:"lag_seconds"`
	DLQTopic    string                `json:"dlq_topic,omitempty"`
	DeadLetters status.Maybe[int64]   `json:"dead_letters"`
	Error       string                `json:"error,omitempty"`
	// LagHealth is the group's lag health over the reads (status.LagHealth).
	LagHealth *status.LagHealth `json:"lag_health,omitempty"`
}

// pathwayIndex is an ingestion edge: the documents topic into one index,
// kept by every worker of its stage (status.Index).
type pathwayIndex struct {
	Name  string `json:"name"`
	Topic string `json:"topic"`
	// AppliedPerSecond is the records applied per second over the
	// workers; Freshness their publication-to-searchable latency.
	AppliedPerSecond float64          `json:"applied_per_second"`
	Freshness        status.Quantiles `json:"freshness_ms"`
	// Lag and LagSeconds are the worst of the live workers'.
	Lag        status.Maybe[int64]   `json:"lag"`
	LagSeconds status.Maybe[float64] `json:"lag_seconds"`
	Workers    []pathwayIndexWorker  `json:"workers"`
}

// pathwayIndexWorker is one worker's copy of an index (status.IndexWorker).
type pathwayIndexWorker struct {
	Instance    string                `json:"instance"`
	Service     string                `json:"service"`
	Stale       bool                  `json:"stale"`
	Ready       bool                  `json:"ready"`
	Position    int64                 `json:"position"`
	Documents   int64                 `json:"documents"`
	NewestAgeMS status.Maybe[float64] `json:"newest_document_age_ms"`
	Lag         status.Maybe[int64]   `json:"lag"`
	LagSeconds  status.Maybe[float64] `json:"lag_seconds"`
	Error       string                `json:"error,omitempty"`
}

// indexesOf renders the status's indexes.
func indexesOf(st status.Status) []pathwayIndex {
	out := []pathwayIndex{}
	for _, ix := range st.Indexes {
		pi := pathwayIndex{Name: ix.Name, Topic: ix.Topic, AppliedPerSecond: ix.Rate, Freshness: ix.Freshness,
			Lag: ix.Lag.Records, LagSeconds: ix.Lag.Seconds, Workers: []pathwayIndexWorker{}}
		for _, w := range ix.Workers {
			pi.Workers = append(pi.Workers, pathwayIndexWorker{Instance: w.Instance, Service: w.Service, Stale: w.Stale, Ready: w.Ready,
				Position: w.Position, Documents: w.Documents, NewestAgeMS: w.NewestAgeMS, Lag: w.Lag.Records, LagSeconds: w.Lag.Seconds, Error: w.Lag.Error})
		}
		out = append(out, pi)
	}
	return out
}

// newPathwaysReport renders st.
func newPathwaysReport(st status.Status) pathwaysReport {
	rep := pathwaysReport{Time: st.Time, Topic: st.PathwaysTopic, Skipped: st.Skipped, Errors: st.Errors,
		Instances: []pathwayInstance{}, Pathways: []pathwayRow{}, Edges: []pathwayEdge{}, Stages: []pathwayStage{}, Indexes: indexesOf(st), Completeness: st.Completeness}
	for _, in := range st.Instances {
		rep.Instances = append(rep.Instances, pathwayInstance{Instance: in.Instance, Service: in.Service,
			WindowStart: in.Start.UTC(), WindowEnd: in.End.UTC(), IntervalSeconds: in.Interval.Seconds(), Series: in.Series, Stale: in.Stale, Late: in.Late})
	}
	for _, r := range st.Pathways {
		cp := r.Checkpoint
		rep.Pathways = append(rep.Pathways, pathwayRow{
			Hash: pathway.HashString(r.Hash), Parent: pathway.HashString(r.Parent), Depth: r.Depth, Edge: cp.Edge(),
			Service: cp.Service, Group: cp.Group, Topic: cp.Topic, Direction: cp.Direction.String(), Overflow: r.Overflow,
			Count: r.Count, Total: r.Total, MsgsPerSecond: r.Rate, Instances: r.Instances, Late: r.Late,
			EdgeLatency: r.Latency, OriginLatency: r.Origin,
		})
	}
	for i, e := range st.Edges {
		rep.Edges = append(rep.Edges, pathwayEdge{Topic: e.Topic, From: e.From, To: e.To, MsgsPerSecond: e.Rate, EdgeLatency: e.Latency, OriginLatency: e.Origin})
		var stage status.Stage // the stage reading e.Topic; none for the results
		if i < len(st.Stages) {
			stage = st.Stages[i]
		}
		row := pathwayStage{Topic: e.Topic, DLQTopic: stage.DLQTopic, DeadLetters: stage.DeadLetters}
		if len(e.Lags) == 0 {
			row.Error = stage.Error
			rep.Stages = append(rep.Stages, row)
		}
		for _, g := range e.Lags {
			row.Group, row.Lag, row.LagSeconds = g.Group, g.Records, g.Seconds
			row.LagHealth = &g.Health
			row.Error = joinErrors(g.Error, stage.Error)
			rep.Stages = append(rep.Stages, row)
		}
	}
	for _, g := range st.GroupErrors {
		rep.Stages = append(rep.Stages, pathwayStage{Group: g.Group, Error: g.Error})
	}
	return rep
}

// joinErrors joins the error texts that are not empty, as errors.Join.
func joinErrors(texts ...string) string {
	return strings.Join(slices.DeleteFunc(texts, func(t string) bool { return t == "" }), "\n")
}

// printPathways prints the report as one JSON document (one line) or as
// tables.
func printPathways(w io.Writer, rep pathwaysReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	return printPathwaysTables(w, rep)
}

// maxIndent bounds the indentation of deep pathways in the table.
const maxIndent = 8

// printPathwaysTables prints the header, the pathways, the edges and the
// stages.
func printPathwaysTables(w io.Writer, rep pathwaysReport) error {
	live := printPathwaysHeader(w, rep)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PATHWAY\tEDGE\tMSG/S\tCOUNT\tTOTAL\tEDGE p50\tp95\tp99\tORIGIN p50\tp95\tp99")
	for _, r := range rep.Pathways {
		hash := r.Hash[:8]
		if r.Overflow {
			hash = "overflow"
		}
		edge := strings.Repeat("  ", min(r.Depth, maxIndent)) + r.Edge
		e, o := r.EdgeLatency, r.OriginLatency
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", hash, edge, rateCell(r.MsgsPerSecond), r.Count, r.Total,
			latencyCell(e.P50), latencyCell(e.P95), latencyCell(e.P99), latencyCell(o.P50), latencyCell(o.P95), latencyCell(o.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(rep.Pathways) > 0:
	case len(rep.Instances) == 0:
		fmt.Fprintln(w, "(no process has published pathways yet)")
	case live == 0:
		fmt.Fprintln(w, "(no process has published lately: are they running?)")
	default:
		fmt.Fprintln(w, "(no pathway measured yet)")
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tFROM → TO\tMSG/S\tEDGE p50\tp99\tORIGIN p50\tp99")
	for _, e := range rep.Edges {
		fmt.Fprintf(tw, "%s\t%s → %s\t%s\t%s\t%s\t%s\t%s\n", e.Topic, e.From, e.To, rateCell(e.MsgsPerSecond),
			latencyCell(e.EdgeLatency.P50), latencyCell(e.EdgeLatency.P99), latencyCell(e.OriginLatency.P50), latencyCell(e.OriginLatency.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	printCompleteness(w, rep.Completeness)
	if err := printIndexesTable(w, rep); err != nil {
		return err
	}
	if err := printStagesTable(w, rep); err != nil {
		return err
	}
	return printLagHealthTable(w, rep)
}

// printIndexesTable prints each ingestion edge, then its workers,
// indented; nothing when no worker follows the documents topic.
func printIndexesTable(w io.Writer, rep pathwaysReport) error {
	if len(rep.Indexes) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX / WORKER\tREADY\tAPPLIED/S\tFRESH p50\tp99\tPOSITION\tDOCS\tLAG\tLAG(s)")
	for _, ix := range rep.Indexes {
		fmt.Fprintf(tw, "%s → %s\t\t%s\t%s\t%s\t\t\t%s\t%s\n", ix.Topic, ix.Name, rateCell(ix.AppliedPerSecond),
			latencyCell(ix.Freshness.P50), latencyCell(ix.Freshness.P99), recordsCell(ix.Lag), ix.LagSeconds.Format(secondsText))
		for _, wk := range ix.Workers {
			ready := map[bool]string{true: "yes", false: "catching up"}[wk.Ready]
			if wk.Stale {
				ready = "stale"
			}
			fmt.Fprintf(tw, "  %s\t%s\t\t\t\t%d\t%d\t%s\t%s\n", wk.Instance, ready, wk.Position, wk.Documents,
				recordsCell(wk.Lag), wk.LagSeconds.Format(secondsText))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// printPathwaysHeader prints who published and what was skipped, and
// returns the number of live instances.
func printPathwaysHeader(w io.Writer, rep pathwaysReport) (live int) {
	stale, late := 0, 0
	for _, in := range rep.Instances {
		switch {
		case in.Stale:
			stale++
		case in.Late:
			late++
			live++
		default:
			live++
		}
	}
	fmt.Fprintf(w, "pathways of %d %s", live, plural(live, "process", "processes"))
	if late > 0 {
		fmt.Fprintf(w, " (%d late or stopped: rates not current)", late)
	}
	if stale > 0 {
		fmt.Fprintf(w, " (%d stale, not counted)", stale)
	}
	fmt.Fprintf(w, " from %s at %s\n", rep.Topic, rep.Time.Format(time.RFC3339))
	if len(rep.Skipped) > 0 {
		var parts []string
		var n uint64
		for _, reason := range slices.Sorted(maps.Keys(rep.Skipped)) {
			parts = append(parts, fmt.Sprintf("%d %s", rep.Skipped[reason], reason))
			n += rep.Skipped[reason]
		}
		fmt.Fprintf(w, "skipped %d aggregate %s: %s\n", n, plural(int(n), "record", "records"), strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	return live
}

// printStagesTable prints the lag and dead letters of each topic, then the
// errors.
func printStagesTable(w io.Writer, rep pathwaysReport) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tGROUP\tLAG\tLAG(s)\tDEAD LETTERS")
	var errs []string
	for _, s := range rep.Stages {
		group := cmp.Or(s.Group, status.Unknown)
		topic := cmp.Or(s.Topic, "?")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", topic, group, recordsCell(s.Lag), s.LagSeconds.Format(secondsText), recordsCell(s.DeadLetters))
		if s.Error != "" {
			errs = append(errs, fmt.Sprintf("%s %s: %s", topic, group, s.Error))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range append(errs, rep.Errors...) {
		fmt.Fprintln(w, "error:", e)
	}
	return nil
}

func recordsCell(n status.Maybe[int64]) string {
	return n.Format(func(n int64) string { return strconv.FormatInt(n, 10) })
}

func secondsText(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) }

func latencyCell(ms status.Maybe[float64]) string { return ms.Format(msCell) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func rateCell(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// msCell formats milliseconds compactly: 850µs, 3.42ms, 12.5ms, 1.20s.
func msCell(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 1:
		return strconv.FormatFloat(ms*1000, 'f', 0, 64) + "µs"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + "ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	case ms < 60000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}
