// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
)

// OverflowAttr marks the series of otelnames.MetricPathwayLatency that
// takes the measurements of pathways beyond the Metrics' bound, as the
// OpenTelemetry SDK's cardinality limit does. The metric's other attributes
// are otelnames's Pathway* keys.
const OverflowAttr = attribute.Key("otel.metric.overflow")

// checkpointInfo is a checkpoint of a Tracer on one topic: its identity
// and identity hash.
type checkpointInfo struct {
	cp pathway.Checkpoint
	id uint64
}

func newCheckpoint(service, group, topic string, d pathway.Direction) *checkpointInfo {
	cp := pathway.Checkpoint{Service: service, Group: group, Topic: topic, Direction: d}
	return &checkpointInfo{cp: cp, id: cp.ID()}
}

// pathwaySeriesKey identifies a pathway series; the overflow series of a
// checkpoint has hash and parent 0.
type pathwaySeriesKey struct {
	cp           uint64
	hash, parent uint64
}

// pathwaySeries holds the latencies of one pathway at one checkpoint.
type pathwaySeries struct {
	key                    pathwaySeriesKey
	cp                     pathway.Checkpoint
	edgeAttrs, originAttrs attribute.Set
	edge, origin           pathway.Histogram
	// cohorts counts the series' records by origin time (completeness).
	cohorts pathway.Cohorts
	// last is when (unix ns) the series last measured, to a second;
	// evicted says it was dropped to make room (Metrics.sweep).
	last    atomic.Int64
	evicted atomic.Bool
}

func (s *pathwaySeries) record(edge, origin time.Duration, sc trace.SpanContext, now int64) {
	s.edge.Record(edge, sc, now)
	s.origin.Record(origin, sc, now)
	if now-s.last.Load() > int64(time.Second) { // one store a second at most
		s.last.Store(now)
	}
}

func newPathwaySeries(k pathwaySeriesKey, cp pathway.Checkpoint) *pathwaySeries {
	kvs := []attribute.KeyValue{
		semconv.MessagingSystemKafka,
		semconv.MessagingDestinationName(cp.Topic),
		otelnames.PathwayEdge.String(cp.Edge()),
		otelnames.PathwayDirection.String(cp.Direction.String()),
	}
	if cp.Group != "" {
		kvs = append(kvs, semconv.MessagingConsumerGroupName(cp.Group))
	}
	if k.hash == 0 {
		kvs = append(kvs, OverflowAttr.Bool(true))
	} else {
		kvs = append(kvs, otelnames.PathwayHash.String(pathway.HashString(k.hash)), otelnames.PathwayParentHash.String(pathway.HashString(k.parent)))
	}
	// attribute.NewSet sorts its argument in place: each set gets its own
	// copy of kvs, or the edge set's sorting would reorder the origin's.
	kvs = slices.Clip(kvs)
	return &pathwaySeries{
		key:         k,
		cp:          cp,
		edgeAttrs:   attribute.NewSet(append(kvs, otelnames.PathwayMeasure.String(otelnames.MeasureEdge))...),
		originAttrs: attribute.NewSet(append(kvs, otelnames.PathwayMeasure.String(otelnames.MeasureOrigin))...),
	}
}

// pathwaySeries returns the series of pathway hash (arrived on parent) at
// checkpoint cp at now (unix ns), through cache, the series last used at
// cp by the caller: records of one partition almost always follow one
// pathway, so most lookups end there. Once the bound is reached, a new
// pathway takes the place of a series idle for pathwayIdle (sweep), or
// goes to the overflow series.
func (m *Metrics) pathwaySeries(cache *atomic.Pointer[pathwaySeries], cp *checkpointInfo, hash, parent uint64, now int64) *pathwaySeries {
	if s := cache.Load(); s != nil && s.key.hash == hash && s.key.parent == parent && !s.evicted.Load() {
		return s
	}
	k := pathwaySeriesKey{cp: cp.id, hash: hash, parent: parent}
	if v, ok := m.pathways.Load(k); ok {
		s := v.(*pathwaySeries)
		cache.Store(s)
		return s
	}
	if m.nPathways.Load() >= m.maxPathways && m.sweep(now) == 0 {
		k.hash, k.parent = 0, 0
		if v, ok := m.pathways.Load(k); ok {
			return v.(*pathwaySeries)
		}
		v, _ := m.pathways.LoadOrStore(k, newPathwaySeries(k, cp.cp))
		return v.(*pathwaySeries)
	}
	v, loaded := m.pathways.LoadOrStore(k, newPathwaySeries(k, cp.cp))
	if !loaded {
		m.nPathways.Add(1)
	}
	s := v.(*pathwaySeries)
	cache.Store(s)
	return s
}

// sweep drops the series (not the overflow ones) that measured nothing
// for pathwayIdle before now, and returns how many. It looks the series
// over at most once per tenth of pathwayIdle, so that a full Metrics
// under a flood of new pathways costs one atomic load per record.
func (m *Metrics) sweep(now int64) int {
	last := m.lastSweep.Load()
	if now-last < int64(m.pathwayIdle/10) || !m.lastSweep.CompareAndSwap(last, now) {
		return 0
	}
	n := 0
	m.pathways.Range(func(k, v any) bool {
		s := v.(*pathwaySeries)
		if l := s.last.Load(); s.key.hash != 0 && l != 0 && now-l > int64(m.pathwayIdle) && m.pathways.CompareAndDelete(k, v) {
			s.evicted.Store(true)
			m.nPathways.Add(-1)
			n++
		}
		return true
	})
	return n
}

// PathwayStats is the state of one pathway at one checkpoint.
type PathwayStats struct {
	// Checkpoint is where the latencies were measured.
	Checkpoint pathway.Checkpoint
	// Hash and Parent identify the pathway; both are 0 for the overflow
	// series of pathways beyond the Metrics' bound.
	Hash, Parent uint64
	// Edge and Origin are the edge and from-origin latencies.
	Edge, Origin pathway.Snapshot
	// EdgeAttrs and OriginAttrs are the attributes of their
	// otelnames.MetricPathwayLatency series.
	EdgeAttrs, OriginAttrs attribute.Set
	// Cohorts counts the series' records by the origin time of their
	// pathway, cumulatively (pathway.Cohorts).
	Cohorts pathway.CohortCounts
}

// Pathways returns the cumulative state of every pathway series, ordered
// by edge then hash: for publishing aggregates (see package pathway) or
// tests.
func (m *Metrics) Pathways() []PathwayStats {
	var out []PathwayStats
	now := time.Now().UnixNano()
	m.pathways.Range(func(_, v any) bool {
		s := v.(*pathwaySeries)
		out = append(out, PathwayStats{Checkpoint: s.cp, Hash: s.key.hash, Parent: s.key.parent, Edge: s.edge.Snapshot(), Origin: s.origin.Snapshot(),
			EdgeAttrs: s.edgeAttrs, OriginAttrs: s.originAttrs, Cohorts: s.cohorts.Counts(now)})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ea, eb := a.Checkpoint.Edge(), b.Checkpoint.Edge(); ea != eb {
			return ea < eb
		}
		if a.Hash != b.Hash {
			return a.Hash < b.Hash
		}
		return a.Parent < b.Parent
	})
	return out
}
