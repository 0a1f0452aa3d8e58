package kafkatrace

import (
	"sort"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/telemetry"
)

// OverflowAttr marks the series of telemetry.MetricPathwayLatency that
// takes the measurements of pathways beyond the Metrics' bound, as the
// OpenTelemetry SDK's cardinality limit does. The metric's other attributes
// are telemetry's Pathway* keys.
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
}

func (s *pathwaySeries) record(edge, origin time.Duration, sc trace.SpanContext, now int64) {
	s.edge.Record(edge, sc, now)
	s.origin.Record(origin, sc, now)
}

func newPathwaySeries(k pathwaySeriesKey, cp pathway.Checkpoint) *pathwaySeries {
	kvs := []attribute.KeyValue{
		semconv.MessagingSystemKafka,
		semconv.MessagingDestinationName(cp.Topic),
		telemetry.PathwayEdge.String(cp.Edge()),
		telemetry.PathwayDirection.String(cp.Direction.String()),
	}
	if cp.Group != "" {
		kvs = append(kvs, semconv.MessagingConsumerGroupName(cp.Group))
	}
	if k.hash == 0 {
		kvs = append(kvs, OverflowAttr.Bool(true))
	} else {
		kvs = append(kvs, telemetry.PathwayHash.String(pathway.HashString(k.hash)), telemetry.PathwayParentHash.String(pathway.HashString(k.parent)))
	}
	return &pathwaySeries{
		key:         k,
		cp:          cp,
		edgeAttrs:   attribute.NewSet(append(kvs, telemetry.PathwayMeasure.String(telemetry.MeasureEdge))...),
		originAttrs: attribute.NewSet(append(kvs, telemetry.PathwayMeasure.String(telemetry.MeasureOrigin))...),
	}
}

// pathwaySeries returns the series of pathway hash (arrived on parent) at
// checkpoint cp, through cache, the series last used at cp by the caller:
// records of one partition almost always follow one pathway, so most
// lookups end there.
func (m *Metrics) pathwaySeries(cache *atomic.Pointer[pathwaySeries], cp *checkpointInfo, hash, parent uint64) *pathwaySeries {
	if s := cache.Load(); s != nil && s.key.hash == hash && s.key.parent == parent {
		return s
	}
	k := pathwaySeriesKey{cp: cp.id, hash: hash, parent: parent}
	if v, ok := m.pathways.Load(k); ok {
		s := v.(*pathwaySeries)
		cache.Store(s)
		return s
	}
	if m.nPathways.Load() >= m.maxPathways {
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

// PathwayStats is the state of one pathway at one checkpoint.
type PathwayStats struct {
	// Checkpoint is where the latencies were measured.
	Checkpoint pathway.Checkpoint
	// Hash and Parent identify the pathway; both are 0 for the overflow
	// series of pathways beyond the Metrics' bound.
	Hash, Parent uint64
	// Edge and Origin are the edge and from-origin latencies.
	Edge, Origin pathway.Snapshot
}

// Pathways returns the cumulative state of every pathway series, ordered
// by edge then hash: for publishing aggregates (see package pathway) or
// tests. Unaffected by the temporality.
func (m *Metrics) Pathways() []PathwayStats {
	var out []PathwayStats
	m.pathways.Range(func(_, v any) bool {
		s := v.(*pathwaySeries)
		out = append(out, PathwayStats{Checkpoint: s.cp, Hash: s.key.hash, Parent: s.key.parent, Edge: s.edge.Snapshot(), Origin: s.origin.Snapshot()})
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

// pathwayExplicitBounds are the explicit buckets of the pathway latency
// with WithExplicitPathwayBuckets: the queue-wait ones.
var pathwayExplicitBounds = queueWaitBounds

type pathwayPrevKey struct {
	s      *pathwaySeries
	origin bool
}

// producePathways returns the pathway latency metric, or false when no
// pathway was recorded (in the interval, with delta temporality).
func (m *Metrics) producePathways(start, now time.Time) (metricdata.Metrics, bool) {
	var (
		expo []metricdata.ExponentialHistogramDataPoint[float64]
		expl []metricdata.HistogramDataPoint[float64]
	)
	add := func(s *pathwaySeries, origin bool) {
		h, attrs := &s.edge, s.edgeAttrs
		if origin {
			h, attrs = &s.origin, s.originAttrs
		}
		snap := h.Snapshot()
		if prev := state[pathway.Snapshot](m, pathwayPrevKey{s, origin}); prev != nil {
			snap, *prev = snap.Sub(*prev), snap
		}
		if snap.Count == 0 {
			return
		}
		exemplars := make([]metricdata.Exemplar[float64], 0, len(snap.Exemplars))
		for _, e := range snap.Exemplars {
			exemplars = append(exemplars, exemplar(e))
		}
		if m.explicit {
			dp := metricdata.HistogramDataPoint[float64]{
				Attributes: attrs, StartTime: start, Time: now, Count: snap.Count, Sum: snap.Sum.Seconds(),
				Bounds: pathwayExplicitBounds, BucketCounts: make([]uint64, len(pathwayExplicitBounds)+1), Exemplars: exemplars,
			}
			dp.BucketCounts[0] = snap.ZeroCount
			for i, c := range snap.Buckets {
				mid := pathway.BucketMiddle(snap.Offset + i).Seconds()
				j := sort.SearchFloat64s(pathwayExplicitBounds, mid)
				dp.BucketCounts[j] += c
			}
			expl = append(expl, dp)
			return
		}
		expo = append(expo, metricdata.ExponentialHistogramDataPoint[float64]{
			Attributes: attrs, StartTime: start, Time: now, Count: snap.Count, Sum: snap.Sum.Seconds(),
			Scale: pathway.Scale, ZeroCount: snap.ZeroCount,
			PositiveBucket: metricdata.ExponentialBucket{Offset: int32(snap.Offset), Counts: snap.Buckets},
			Exemplars:      exemplars,
		})
	}
	m.pathways.Range(func(_, v any) bool {
		s := v.(*pathwaySeries)
		add(s, false)
		add(s, true)
		return true
	})
	const desc = "Latency of every record at each pathway checkpoint: from the previous checkpoint (measure=edge) or from the pathway's origin (measure=origin)."
	switch {
	case len(expo) > 0:
		return metricdata.Metrics{Name: telemetry.MetricPathwayLatency, Description: desc, Unit: telemetry.MetricPathwayLatencyUnit,
			Data: metricdata.ExponentialHistogram[float64]{DataPoints: expo, Temporality: m.temporality}}, true
	case len(expl) > 0:
		return metricdata.Metrics{Name: telemetry.MetricPathwayLatency, Description: desc, Unit: telemetry.MetricPathwayLatencyUnit,
			Data: metricdata.Histogram[float64]{DataPoints: expl, Temporality: m.temporality}}, true
	}
	return metricdata.Metrics{}, false
}
