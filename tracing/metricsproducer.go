// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
)

// MetricsProducer hands the messaging metrics that a [kafkatrace.Metrics]
// aggregates in memory to the OpenTelemetry SDK when a reader collects: it
// is an sdkmetric.Producer (register it with [WithMetricProducer], or
// sdkmetric.WithProducer on each reader). kafkatrace records with the OTel
// API only; this adapter is the one place its metrics meet SDK types.
//
// The metrics are those listed on [kafkatrace.Metrics], plus
// otelnames.MetricPathwayLatency with kafkatrace.WithPathways, grouped as
// the kafkatrace instrumentation scope. The histograms carry the last
// exemplar of a sampled record per bucket (as kafkatrace.WithExemplarFilter
// chooses). A MetricsProducer is safe for
// concurrent use.
type MetricsProducer struct {
	m *kafkatrace.Metrics

	temporality metricdata.Temporality
	explicit    bool      // pathway latency as an explicit-bucket histogram
	explBounds  []float64 // its bounds, with explicit

	// prev holds, with delta temporality, each series' values at the
	// last collection; collect guards it and the collection time.
	collect   sync.Mutex
	prev      map[any]any
	collected time.Time
}

// ProducerOption configures a [MetricsProducer].
type ProducerOption interface{ applyProducer(*MetricsProducer) }

type producerOptionFunc func(*MetricsProducer)

func (f producerOptionFunc) applyProducer(p *MetricsProducer) { f(p) }

// WithTemporality sets the temporality of every exported metric:
// metricdata.CumulativeTemporality (the default) or DeltaTemporality, in
// which case each collection reports what was recorded since the previous
// one (use a single reader). See [MetricsPreferences] for
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE.
func WithTemporality(t metricdata.Temporality) ProducerOption {
	return producerOptionFunc(func(p *MetricsProducer) {
		if t == metricdata.DeltaTemporality {
			p.temporality = t
		}
	})
}

// WithExplicitPathwayBuckets exports kretrieve.pathway.latency as an
// explicit-bucket histogram (the queue-wait boundaries) instead of a base-2
// exponential one, for backends that cannot store exponential histograms
// (OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=
// explicit_bucket_histogram). Each exponential bucket is counted in the
// explicit bucket holding its middle.
func WithExplicitPathwayBuckets() ProducerOption {
	return producerOptionFunc(func(p *MetricsProducer) { p.explicit = true })
}

// NewMetricsProducer returns the producer of m's metrics.
func NewMetricsProducer(m *kafkatrace.Metrics, opts ...ProducerOption) *MetricsProducer {
	p := &MetricsProducer{m: m, temporality: metricdata.CumulativeTemporality, collected: m.Start()}
	for _, o := range opts {
		if o != nil {
			o.applyProducer(p)
		}
	}
	if p.explicit {
		p.explBounds = kafkatrace.QueueWaitBounds()
	}
	return p
}

// state returns the previous-collection state of key, creating it; nil
// with cumulative temporality. Call with p.collect held.
func state[T any](p *MetricsProducer, key any) *T {
	if p.temporality != metricdata.DeltaTemporality {
		return nil
	}
	if p.prev == nil {
		p.prev = make(map[any]any)
	}
	if v, ok := p.prev[key].(*T); ok {
		return v
	}
	v := new(T)
	p.prev[key] = v
	return v
}

// histState is a histogram's cumulative values at one collection.
type histState struct {
	counts []uint64
	sum    int64
}

// Keys of the previous-collection states of a messaging series.
type (
	countKey     attribute.Distinct
	durationKey  attribute.Distinct
	queueWaitKey attribute.Distinct
	pathwayKey   attribute.Distinct
)

// dataPoint returns the histogram's point, or false when it has nothing to
// report: cumulative, or with prev (delta temporality) the difference from
// the previous collection, whose state it updates.
func dataPoint(h kafkatrace.HistogramStats, attrs attribute.Set, start, now time.Time, prev *histState) (metricdata.HistogramDataPoint[float64], bool) {
	if h.Bounds == nil || h.Count == 0 {
		return metricdata.HistogramDataPoint[float64]{}, false
	}
	dp := metricdata.HistogramDataPoint[float64]{
		Attributes:   attrs,
		StartTime:    start,
		Time:         now,
		Bounds:       make([]float64, len(h.Bounds)),
		BucketCounts: h.Counts,
	}
	for i, b := range h.Bounds {
		dp.Bounds[i] = seconds(b)
	}
	sum := h.Sum
	if prev != nil { // delta: min and max are not known per interval
		cur := histState{counts: append([]uint64(nil), dp.BucketCounts...), sum: sum}
		if prev.counts != nil {
			for i := range dp.BucketCounts {
				dp.BucketCounts[i] -= prev.counts[i]
			}
			sum -= prev.sum
		}
		*prev = cur
	} else {
		dp.Min = metricdata.NewExtrema(seconds(h.Min))
		dp.Max = metricdata.NewExtrema(seconds(h.Max))
	}
	for _, c := range dp.BucketCounts {
		dp.Count += c
	}
	if dp.Count == 0 {
		return metricdata.HistogramDataPoint[float64]{}, false
	}
	dp.Sum = seconds(sum)
	for _, e := range h.Exemplars {
		if prev == nil || e.Time >= start.UnixNano() {
			dp.Exemplars = append(dp.Exemplars, exemplar(e))
		}
	}
	return dp, true
}

// exemplar converts a recorded exemplar to the SDK's form; one recorded
// outside any trace (OTEL_METRICS_EXEMPLAR_FILTER=always_on) has no
// trace and span IDs, as the SDK's own exemplars then have.
func exemplar(e pathway.Exemplar) metricdata.Exemplar[float64] {
	x := metricdata.Exemplar[float64]{Time: time.Unix(0, e.Time), Value: e.Value.Seconds()}
	if e.TraceID.IsValid() {
		x.TraceID = append([]byte(nil), e.TraceID[:]...)
		x.SpanID = append([]byte(nil), e.SpanID[:]...)
	}
	return x
}

func seconds(ns int64) float64 { return float64(ns) / float64(time.Second) }

// Produce returns the values of every series, grouped as the kafkatrace
// instrumentation scope: cumulative since kafkatrace.NewMetrics, or with
// WithTemporality(DeltaTemporality) since the previous Produce. It
// implements sdkmetric.Producer.
func (p *MetricsProducer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	p.collect.Lock()
	defer p.collect.Unlock()
	now := time.Now()
	start := p.m.Start()
	if p.temporality == metricdata.DeltaTemporality {
		start = p.collected
	}
	p.collected = now
	var (
		sent, consumed   []metricdata.DataPoint[int64]
		sendDur, procDur []metricdata.HistogramDataPoint[float64]
		queueWait        []metricdata.HistogramDataPoint[float64]
		counter          = func(s kafkatrace.MessagingStats) (metricdata.DataPoint[int64], bool) {
			v := s.Count
			if prev := state[int64](p, countKey(s.Attrs.Equivalent())); prev != nil {
				v, *prev = v-*prev, v
			}
			return metricdata.DataPoint[int64]{Attributes: s.Attrs, StartTime: start, Time: now, Value: v}, v > 0
		}
	)
	for _, s := range p.m.Messaging() {
		dur, hasDur := dataPoint(s.Duration, s.Attrs, start, now, state[histState](p, durationKey(s.Attrs.Equivalent())))
		switch s.Op {
		case otelnames.OpSend:
			if dp, ok := counter(s); ok {
				sent = append(sent, dp)
			}
			if hasDur {
				sendDur = append(sendDur, dur)
			}
		case otelnames.OpProcess:
			// Records are counted as consumed when processing starts, in
			// the series without error.type; durations by outcome.
			if dp, ok := counter(s); ok {
				consumed = append(consumed, dp)
			}
			if hasDur {
				procDur = append(procDur, dur)
			}
			if qw, ok := dataPoint(s.QueueWait, s.Attrs, start, now, state[histState](p, queueWaitKey(s.Attrs.Equivalent()))); ok {
				queueWait = append(queueWait, qw)
			}
		}
	}
	var out []metricdata.Metrics
	addSum := func(name, desc, unit string, dps []metricdata.DataPoint[int64]) {
		if len(dps) > 0 {
			out = append(out, metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: metricdata.Sum[int64]{
				DataPoints: dps, Temporality: p.temporality, IsMonotonic: true,
			}})
		}
	}
	addHist := func(name, desc, unit string, dps []metricdata.HistogramDataPoint[float64]) {
		if len(dps) > 0 {
			out = append(out, metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: metricdata.Histogram[float64]{
				DataPoints: dps, Temporality: p.temporality,
			}})
		}
	}
	addSum(messagingconv.ClientSentMessages{}.Name(), messagingconv.ClientSentMessages{}.Description(), messagingconv.ClientSentMessages{}.Unit(), sent)
	addHist(messagingconv.ClientOperationDuration{}.Name(), messagingconv.ClientOperationDuration{}.Description(), messagingconv.ClientOperationDuration{}.Unit(), sendDur)
	addSum(messagingconv.ClientConsumedMessages{}.Name(), messagingconv.ClientConsumedMessages{}.Description(), messagingconv.ClientConsumedMessages{}.Unit(), consumed)
	addHist(messagingconv.ProcessDuration{}.Name(), messagingconv.ProcessDuration{}.Description(), messagingconv.ProcessDuration{}.Unit(), procDur)
	addHist(otelnames.MetricQueueWait, "Time records spent in Kafka between their timestamp and the start of processing.", "s", queueWait)
	if pw, ok := p.producePathways(start, now); ok {
		out = append(out, pw)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{
		Scope:   instrumentation.Scope{Name: kafkatrace.ScopeName, SchemaURL: semconv.SchemaURL},
		Metrics: out,
	}}, nil
}

// producePathways returns the pathway latency metric, or false when no
// pathway was recorded (in the interval, with delta temporality).
func (p *MetricsProducer) producePathways(start, now time.Time) (metricdata.Metrics, bool) {
	var (
		expo []metricdata.ExponentialHistogramDataPoint[float64]
		expl []metricdata.HistogramDataPoint[float64]
	)
	add := func(snap pathway.Snapshot, attrs attribute.Set) {
		if prev := state[pathway.Snapshot](p, pathwayKey(attrs.Equivalent())); prev != nil {
			snap, *prev = snap.Sub(*prev), snap
		}
		if snap.Count == 0 {
			return
		}
		exemplars := make([]metricdata.Exemplar[float64], 0, len(snap.Exemplars))
		for _, e := range snap.Exemplars {
			exemplars = append(exemplars, exemplar(e))
		}
		dp := metricdata.ExponentialHistogramDataPoint[float64]{
			Attributes: attrs, StartTime: start, Time: now, Count: snap.Count, Sum: snap.Sum.Seconds(),
			Scale: pathway.Scale, ZeroCount: snap.ZeroCount,
			PositiveBucket: metricdata.ExponentialBucket{Offset: int32(snap.Offset), Counts: snap.Buckets},
			Exemplars:      exemplars,
		}
		if p.explicit {
			expl = append(expl, explicitPoint(dp, p.explBounds))
			return
		}
		expo = append(expo, dp)
	}
	for _, s := range p.m.Pathways() {
		add(s.Edge, s.EdgeAttrs)
		add(s.Origin, s.OriginAttrs)
	}
	const desc = "Latency of every record at each pathway checkpoint: from the previous checkpoint (measure=edge) or from the pathway's origin (measure=origin)."
	switch {
	case len(expo) > 0:
		return metricdata.Metrics{Name: otelnames.MetricPathwayLatency, Description: desc, Unit: "s",
			Data: metricdata.ExponentialHistogram[float64]{DataPoints: expo, Temporality: p.temporality}}, true
	case len(expl) > 0:
		return metricdata.Metrics{Name: otelnames.MetricPathwayLatency, Description: desc, Unit: "s",
			Data: metricdata.Histogram[float64]{DataPoints: expl, Temporality: p.temporality}}, true
	}
	return metricdata.Metrics{}, false
}
