// SPDX-License-Identifier: Apache-2.0

package pipeline

import (
	"cmp"
	"errors"
	"log/slog"
	"slices"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/enrichment"
	"github.com/kretrieve/kretrieve/consumers/retrieval"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/topology"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Stage declares one stage of the pipeline: its place in the topology
// (name, consumer group, input and output topics; the name is also its
// worker command and ACL role), the handler its workers run, and its
// record limits.
type Stage struct {
	topology.Stage
	// NewHandler returns the handler of one worker of the stage. Required
	// unless External.
	NewHandler func(StageEnv) (consumers.Handler, error)
	// External says the stage's workers run outside this program (a stage
	// written in another language, such as examples/python-stage): it is
	// in the topology (topics, dead-letter topics, groups, the result
	// collector's watch), but StartWorkers starts none of its workers and
	// NewWorker refuses it. See ExternalStage.
	External bool
	// Limits override Config.Worker's record limits for this stage's
	// workers; a zero field keeps Config.Worker's.
	Limits consumers.Limits
	// WorkSpans name the spans the handler records inside the process
	// span, which run summaries show per stage (kretrieve run).
	WorkSpans []string
}

// StageEnv is what a stage's NewHandler builds its handler from.
type StageEnv struct {
	// Config is the pipeline's settings, defaults filled in, such as
	// RecordQueryText.
	Config Config
	// TracerProvider, MeterProvider and Logger are the pipeline's (see
	// New's options), never nil.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Logger         *slog.Logger
	// Stage is the stage's place in the topology; its handler publishes
	// to Stage.Output.
	Stage topology.Stage
	// Index is the index the worker was started with, or nil.
	Index Index
}

// Index is what the default stages need of an index: retrieval searches
// it, enrichment highlights its documents. *search.Index is one.
type Index interface {
	retrieval.Searcher
	enrichment.Store
}

// DefaultStages declares the default pipeline over topics: retrieval
// searches the index for each request and publishes candidates;
// enrichment loads their documents and snippets, re-ranks them and
// publishes the result. Both need the index (StageEnv.Index). Zero topics
// mean messages.DefaultTopics(), as a zero Config's stages do.
func DefaultStages(topics messages.Topics) []Stage {
	if topics == (messages.Topics{}) {
		topics = messages.DefaultTopics()
	}
	top := topology.Default(topics)
	return []Stage{
		{Stage: top.Stages[0], NewHandler: func(env StageEnv) (consumers.Handler, error) {
			if env.Index == nil {
				return nil, errNoIndex
			}
			return retrieval.Handler(env.Index, retrieval.Config{CandidatesTopic: env.Stage.Output, Stage: env.Stage.Name,
				RecordQueryText: env.Config.RecordQueryText, RecordDocuments: env.Config.RecordDocuments,
				SearchTimeout: env.Config.SearchTimeout},
				consumers.WithTracerProvider(env.TracerProvider)), nil
		}, WorkSpans: []string{otelnames.SpanSearch}},
		{Stage: top.Stages[1], NewHandler: func(env StageEnv) (consumers.Handler, error) {
			if env.Index == nil {
				return nil, errNoIndex
			}
			return enrichment.Handler(env.Index, enrichment.Config{ResultsTopic: env.Stage.Output, Stage: env.Stage.Name},
				consumers.WithTracerProvider(env.TracerProvider)), nil
		}, WorkSpans: []string{otelnames.SpanLoadDocuments, otelnames.SpanDedupe, otelnames.SpanRerank}},
	}
}

// ExternalStage declares a stage whose workers run outside this program:
// named name (its consumer group too), writing output, to be placed with
// InsertStage, which sets its input.
func ExternalStage(name, output string) Stage {
	return Stage{Stage: topology.Stage{Name: name, Group: name, Output: output}, External: true}
}

// errNoIndex is the error of a default stage started without an index.
var errNoIndex = errors.New("no index: the default stages search an index")

// applyLimits overrides c's record limits with l's non-zero fields.
func applyLimits(c *consumers.Config, l consumers.Limits) {
	c.MaxRecordBytes = cmp.Or(l.MaxRecordBytes, c.MaxRecordBytes)
	c.MaxHeaders = cmp.Or(l.MaxHeaders, c.MaxHeaders)
	c.MaxHeaderBytes = cmp.Or(l.MaxHeaderBytes, c.MaxHeaderBytes)
}

// InsertStage returns a copy of stages with s placed after the stage named
// after, chained as topology.Topology.Insert chains it: s reads that
// stage's output and the stage that read it before now reads s.Output.
func InsertStage(stages []Stage, after string, s Stage) ([]Stage, error) {
	inserted, err := topologyOf(stages, "").Insert(after, s.Stage)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(stages, func(st Stage) bool { return st.Name == after }) + 1
	out := slices.Insert(slices.Clone(stages), i, s)
	for j := range out {
		out[j].Stage = inserted.Stages[j]
	}
	return out, nil
}
