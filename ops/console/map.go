// SPDX-License-Identifier: Apache-2.0

package console

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/kretrieve/kretrieve/ops/status"
)

// mapDoc is the body of GET /api/map and of each "map" event: a rendering
// of a status.Status, whose unknown numbers are null.
type mapDoc struct {
	Updated time.Time  `json:"updated"`
	Stages  []mapStage `json:"stages"`
	Edges   []mapEdge  `json:"edges"`
	// Indexes are the ingestion edges: the documents topic into each
	// index that follows it.
	Indexes []mapIndex `json:"indexes"`
	// Completeness is how many requests of each origin-time cohort
	// ended, in status.Completeness's own JSON form (the CLI's).
	Completeness status.Completeness `json:"completeness"`
	// Errors are what could not be measured (the rest is shown).
	Errors []string `json:"errors,omitempty"`
	// exemplars are the pathway latency histograms' exemplars, for GET
	// /api/slowest.
	exemplars []exemplar
}

// mapStage is a box of the map: a stage of the topology.
type mapStage struct {
	Name            string               `json:"name"`
	Group           string               `json:"group"`
	Input           string               `json:"input"`
	Output          string               `json:"output"`
	ProcessedPerSec float64              `json:"processed_per_sec"`
	DeadLetters     status.Maybe[int64]  `json:"dead_letters"`
	DLQTopic        string               `json:"dlq_topic"`
	TopReasons      []status.ReasonCount `json:"top_reasons"`
}

// mapEdge is a pipeline topic between two stages (or the origin and the
// results).
type mapEdge struct {
	Topic       string                `json:"topic"`
	From        string                `json:"from"`
	To          string                `json:"to"`
	MsgsPerSec  float64               `json:"msgs_per_sec"`
	EdgeP50MS   status.Maybe[float64] `json:"edge_p50_ms"`
	EdgeP99MS   status.Maybe[float64] `json:"edge_p99_ms"`
	OriginP50MS status.Maybe[float64] `json:"origin_p50_ms"`
	OriginP99MS status.Maybe[float64] `json:"origin_p99_ms"`
	// LagRecords and LagSeconds are the consuming group's lag; null when
	// unknown or when no group consumes the topic (the results topic).
	LagRecords status.Maybe[int64]   `json:"lag_records"`
	LagSeconds status.Maybe[float64] `json:"lag_seconds"`
	// LagHealth is the consuming group's lag health (status, velocity,
	// time to drain, retention headroom); unknown for the results topic.
	LagHealth status.LagHealth `json:"lag_health"`
}

// mapIndex is an ingestion edge: the documents topic into one index,
// kept by each of its workers (status.Index).
type mapIndex struct {
	Name           string                `json:"name"`
	Topic          string                `json:"topic"`
	AppliedPerSec  float64               `json:"applied_per_sec"`
	FreshnessP50MS status.Maybe[float64] `json:"freshness_p50_ms"`
	FreshnessP99MS status.Maybe[float64] `json:"freshness_p99_ms"`
	LagRecords     status.Maybe[int64]   `json:"lag_records"`
	LagSeconds     status.Maybe[float64] `json:"lag_seconds"`
	Workers        []mapIndexWorker      `json:"workers"`
}

// mapIndexWorker is one worker's copy of an index (status.IndexWorker).
type mapIndexWorker struct {
	Instance    string                `json:"instance"`
	Stale       bool                  `json:"stale"`
	Ready       bool                  `json:"ready"`
	Position    int64                 `json:"position"`
	Documents   int64                 `json:"documents"`
	NewestAgeMS status.Maybe[float64] `json:"newest_document_age_ms"`
	LagRecords  status.Maybe[int64]   `json:"lag_records"`
	LagSeconds  status.Maybe[float64] `json:"lag_seconds"`
}

func (c *Console) getMap(w http.ResponseWriter, r *http.Request, l *live) {
	writeJSON(w, http.StatusOK, l.pipelineMap(r.Context()))
}

// pipelineMap returns the map, read at most once per half Interval
// whatever the number of browsers.
func (l *live) pipelineMap(ctx context.Context) mapDoc {
	l.mapMu.Lock()
	defer l.mapMu.Unlock()
	if !l.mapAt.IsZero() && time.Since(l.mapAt) < l.c.cfg.Interval/2 {
		return l.mapDoc
	}
	st, err := l.status.Read(ctx)
	l.mapDoc = mapOf(st, err)
	l.mapAt = time.Now()
	return l.mapDoc
}

// mapOf renders st as the map; err is the error of reading the pathway
// windows.
func mapOf(st status.Status, err error) mapDoc {
	doc := mapDoc{Updated: st.Time, Stages: []mapStage{}, Edges: []mapEdge{}, Indexes: []mapIndex{}, exemplars: []exemplar{}, Completeness: st.Completeness}
	if err != nil {
		doc.Errors = append(doc.Errors, err.Error())
	}
	doc.Errors = append(doc.Errors, st.Errors...)
	for _, g := range st.GroupErrors {
		doc.Errors = append(doc.Errors, "lag: "+g.Error)
	}
	for _, s := range st.Stages {
		doc.Stages = append(doc.Stages, mapStage{Name: s.Name, Group: s.Group, Input: s.Input, Output: s.Output,
			ProcessedPerSec: s.Rate, DeadLetters: s.DeadLetters, DLQTopic: s.DLQTopic, TopReasons: s.TopReasons})
		if s.Error != "" {
			doc.Errors = append(doc.Errors, "dead letters: "+s.Error)
		}
	}
	for _, e := range st.Edges {
		doc.Edges = append(doc.Edges, mapEdge{Topic: e.Topic, From: e.From, To: e.To, MsgsPerSec: e.Rate,
			EdgeP50MS: e.Latency.P50, EdgeP99MS: e.Latency.P99, OriginP50MS: e.Origin.P50, OriginP99MS: e.Origin.P99,
			LagRecords: e.Lag.Records, LagSeconds: e.Lag.Seconds})
		doc.Edges[len(doc.Edges)-1].LagHealth = e.Lag.Health
	}
	for _, ix := range st.Indexes {
		mi := mapIndex{Name: ix.Name, Topic: ix.Topic, AppliedPerSec: ix.Rate, FreshnessP50MS: ix.Freshness.P50, FreshnessP99MS: ix.Freshness.P99,
			LagRecords: ix.Lag.Records, LagSeconds: ix.Lag.Seconds, Workers: []mapIndexWorker{}}
		for _, w := range ix.Workers {
			mi.Workers = append(mi.Workers, mapIndexWorker{Instance: w.Instance, Stale: w.Stale, Ready: w.Ready, Position: w.Position,
				Documents: w.Documents, NewestAgeMS: w.NewestAgeMS, LagRecords: w.Lag.Records, LagSeconds: w.Lag.Seconds})
			if w.Lag.Error != "" && !slices.Contains(doc.Errors, "index lag: "+w.Lag.Error) {
				doc.Errors = append(doc.Errors, "index lag of "+w.Instance+": "+w.Lag.Error)
			}
		}
		doc.Indexes = append(doc.Indexes, mi)
	}
	for _, x := range st.Exemplars {
		doc.exemplars = append(doc.exemplars, exemplar(x))
	}
	return doc
}
