// SPDX-License-Identifier: Apache-2.0

package status

import (
	"time"

	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

// Status is the pipeline's live status at one moment.
type Status struct {
	// Time is when it was read.
	Time time.Time
	// PathwaysTopic is the topic the pathway windows were read from.
	PathwaysTopic string
	// Instances are the processes that published windows, stale ones
	// included (pathwaytopic.View.Instances).
	Instances []pathwaytopic.Instance
	// Pathways are the pathway checkpoints over the instances' windows, in
	// pathway order (pathwaytopic.View.Rows).
	Pathways []Pathway
	// Skipped counts the pathway records refused, by reason.
	Skipped map[string]uint64
	// Stages are the topology's stages, in order.
	Stages []Stage
	// Edges are the pipeline topics, in order: the first from "origin",
	// the last to "results".
	Edges []Edge
	// Indexes are the indexes that follow the documents topic, by name:
	// the ingestion edges, with every worker's copy (see Index).
	Indexes []Index
	// GroupErrors are the groups whose lag could not be measured at all
	// (such as a group that does not exist), by group.
	GroupErrors []GroupError
	// Completeness is how many requests of each origin-time cohort
	// entered and ended, and where the unfinished ones are.
	Completeness Completeness
	// Exemplars are the exemplars of the pathway latency histograms, the
	// slowest first, at most MaxExemplars.
	Exemplars []Exemplar
	// Errors are what could not be measured as a whole, besides the
	// pathway windows (Source.Read's error): the lag of every group.
	Errors []string
}

// Quantiles are a latency's quantiles in milliseconds, each unknown when
// no record was measured.
type Quantiles struct {
	// P50, P95 and P99 are the median, the 95th and the 99th percentile.
	P50 Maybe[float64] `json:"p50"`
	P95 Maybe[float64] `json:"p95"`
	P99 Maybe[float64] `json:"p99"`
}

// Pathway is one pathway checkpoint over the instances' windows.
type Pathway struct {
	// Checkpoint is where the latencies were measured.
	Checkpoint pathway.Checkpoint
	// Hash and Parent identify the pathway; both 0 for overflow series.
	Hash, Parent uint64
	// Depth is the checkpoint's position in its pathway, 0 for the first.
	Depth int
	// Overflow marks the series of the pathways beyond a process's bound.
	Overflow bool
	// Count is the records in the windows, Total since the processes
	// started.
	Count, Total uint64
	// Rate is records per second in the windows.
	Rate float64
	// Instances is the number of instances that measured the series.
	Instances int
	// Late is the number of those whose windows are late or final
	// (pathwaytopic.Instance.Late): when it equals Instances, Rate is the
	// last measured, not a current one.
	Late int
	// Latency and Origin are the edge and from-origin latencies.
	Latency, Origin Quantiles
}

// Stage is one stage of the topology.
type Stage struct {
	// Name, Group, Input and Output are the topology's.
	Name, Group, Input, Output string
	// Rate is the records per second the stage's group started processing
	// in the windows (the rate of its input edge).
	Rate float64
	// DLQTopic is the dead-letter topic of Input.
	DLQTopic string
	// DeadLetters is the records DLQTopic holds.
	DeadLetters Maybe[int64]
	// TopReasons are the letters' most frequent reasons, at most
	// TopReasons; empty when unknown.
	TopReasons []ReasonCount
	// Error says what of the dead letters could not be measured.
	Error string
}

// Edge is one pipeline topic, between two stages (or the origin and the
// first stage, or the last stage and the results).
type Edge struct {
	// Topic is the pipeline topic.
	Topic string
	// From and To are the stages it joins: "origin" before the first,
	// "results" after the last.
	From, To string
	// Group is the group of the stage that consumes Topic; "" for the
	// results topic.
	Group string
	// Rate is the records per second read from Topic by Group in the
	// windows; for the results topic, written to it (each collector reads
	// every result).
	Rate float64
	// Latency and Origin are the edge and from-origin latencies of the
	// records read.
	Latency, Origin Quantiles
	// Lag is Group's lag on Topic; unknown for the results topic.
	Lag Lag
	// Lags are the lags on Topic of every group measured that consumes it,
	// by group (Group's among them).
	Lags []GroupLag
}

// Lag is how far a group is behind on a topic: the sum over its
// partitions.
type Lag struct {
	// Records is the records not yet consumed.
	Records Maybe[int64]
	// Seconds is the age of the oldest of them; 0 when Records is 0.
	Seconds Maybe[float64]
	// Error says what could not be measured.
	Error string
	// Health is the lag's health over the Source's last reads; left out
	// of JSON when nothing was judged.
	Health LagHealth `json:",omitzero"`
}

// GroupLag is one group's Lag on a topic.
type GroupLag struct {
	// Group is the consumer group.
	Group string
	Lag
}

// GroupError is a group whose lag could not be measured at all.
type GroupError struct {
	// Group is the consumer group; Error says why.
	Group, Error string
}

// ReasonCount is how many dead letters carry a reason (or another key:
// see CountBy).
type ReasonCount struct {
	// Reason is the key counted.
	Reason string `json:"reason"`
	// Count is the letters with it.
	Count int `json:"count"`
}

// Exemplar is one exemplar of a pathway latency histogram.
type Exemplar struct {
	// TraceID is the trace of the record measured.
	TraceID string `json:"trace_id"`
	// Metric names the series: otelnames.MetricPathwayLatency, the
	// measure and the edge.
	Metric string `json:"metric"`
	// ValueMS is the latency in milliseconds.
	ValueMS float64 `json:"value_ms"`
}
