package kafkatrace

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/telemetry"
)

// Bucket boundaries, in seconds. The messaging durations use the boundaries
// the semantic conventions advise for them; queue wait reaches further,
// since a backlog is measured in minutes.
var (
	durationBounds  = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	queueWaitBounds = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
)

// Metrics aggregates the messaging metrics of any number of Tracers in
// memory and hands them to the OpenTelemetry SDK when a reader collects, as
// an sdkmetric.Producer (register it with sdkmetric.WithProducer on each
// reader). Recording a record costs a few atomic additions on counters
// cached per partition: no attribute sets are resolved and nothing is
// allocated per record, where the SDK's synchronous instruments cost about
// half a microsecond per measurement (five per record).
//
// The metrics, cumulative since NewMetrics:
//
//	messaging.client.sent.messages       counter   per topic, partition (error.type on failure)
//	messaging.client.operation.duration  histogram send: produce until the broker's ack
//	messaging.client.consumed.messages   counter   per topic, partition, group
//	messaging.process.duration           histogram process (error.type on failure)
//	kretrieve.messaging.queue_wait.duration histogram record timestamp until processing
//
// Every series carries messaging.system and messaging.operation.name; the
// consumer group is messaging.consumer.group.name. The histograms keep
// the last exemplar of a sampled record per bucket. With [WithPathways],
// kretrieve.pathway.latency is recorded too (see [telemetry.MetricPathwayLatency]).
// A Metrics is safe for concurrent use.
type Metrics struct {
	start  time.Time
	series sync.Map // seriesKey -> *series

	// pathways holds the pathway latency series, at most maxPathways
	// of them beyond one overflow series per checkpoint.
	pathways    sync.Map // pathwaySeriesKey -> *pathwaySeries
	nPathways   atomic.Int64
	maxPathways int64

	temporality metricdata.Temporality
	explicit    bool // pathway latency as an explicit-bucket histogram

	// prev holds, with delta temporality, each series' values at the
	// last collection; collected guards it and the collection time.
	collect   sync.Mutex
	prev      map[any]any
	collected time.Time
}

// DefaultMaxPathways is the default bound on pathway series per Metrics.
const DefaultMaxPathways = 256

// MetricsOption configures a Metrics.
type MetricsOption interface{ applyMetrics(*Metrics) }

type metricsOptionFunc func(*Metrics)

func (f metricsOptionFunc) applyMetrics(m *Metrics) { f(m) }

// WithTemporality sets the temporality of every exported metric:
// metricdata.CumulativeTemporality (the default) or DeltaTemporality, in
// which case each collection reports what was recorded since the previous
// one (use a single reader). See tracing.MetricsTemporality for
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE.
func WithTemporality(t metricdata.Temporality) MetricsOption {
	return metricsOptionFunc(func(m *Metrics) {
		if t == metricdata.DeltaTemporality {
			m.temporality = t
		}
	})
}

// WithExplicitPathwayBuckets exports kretrieve.pathway.latency as an
// explicit-bucket histogram (the queue-wait boundaries) instead of a base-2
// exponential one, for backends that cannot store exponential histograms
// (OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=
// explicit_bucket_histogram). Each exponential bucket is counted in the
// explicit bucket holding its middle.
func WithExplicitPathwayBuckets() MetricsOption {
	return metricsOptionFunc(func(m *Metrics) { m.explicit = true })
}

// WithMaxPathways bounds the pathway series: once n (pathway, parent,
// checkpoint) combinations are held, new ones are recorded in their
// checkpoint's overflow series, marked otel.metric.overflow=true. Default:
// DefaultMaxPathways.
func WithMaxPathways(n int) MetricsOption {
	return metricsOptionFunc(func(m *Metrics) {
		if n > 0 {
			m.maxPathways = int64(n)
		}
	})
}

// NewMetrics returns an empty Metrics whose series start now.
func NewMetrics(opts ...MetricsOption) *Metrics {
	m := &Metrics{start: time.Now(), maxPathways: DefaultMaxPathways, temporality: metricdata.CumulativeTemporality}
	for _, o := range opts {
		o.applyMetrics(m)
	}
	m.collected = m.start
	return m
}

// seriesKey identifies the series of one operation on one partition.
type seriesKey struct {
	op        string // telemetry.OpSend or telemetry.OpProcess
	topic     string
	partition int32 // -1 for records that failed before being assigned one
	group     string
	errType   string
}

// series holds one key's counts. Durations are kept in integer nanoseconds.
type series struct {
	attrs     attribute.Set
	count     atomic.Int64
	duration  histogram
	queueWait histogram // process only
}

func (m *Metrics) seriesFor(k seriesKey) *series {
	if s, ok := m.series.Load(k); ok {
		return s.(*series)
	}
	s, _ := m.series.LoadOrStore(k, newSeries(k))
	return s.(*series)
}

func newSeries(k seriesKey) *series {
	kvs := []attribute.KeyValue{
		semconv.MessagingSystemKafka,
		semconv.MessagingOperationName(k.op),
		semconv.MessagingDestinationName(k.topic),
	}
	if k.partition >= 0 {
		kvs = append(kvs, semconv.MessagingDestinationPartitionID(strconv.Itoa(int(k.partition))))
	}
	if k.group != "" {
		kvs = append(kvs, semconv.MessagingConsumerGroupName(k.group))
	}
	if k.errType != "" {
		kvs = append(kvs, semconv.ErrorTypeKey.String(k.errType))
	}
	s := &series{attrs: attribute.NewSet(kvs...)}
	s.duration.init(durationBounds)
	if k.op == telemetry.OpProcess {
		s.queueWait.init(queueWaitBounds)
	}
	return s
}

// histogram is an explicit-bucket histogram updated with atomic operations.
type histogram struct {
	bounds   []int64 // upper bounds in nanoseconds, inclusive as in OTLP
	counts   []atomic.Uint64
	sum      atomic.Int64 // nanoseconds
	min, max atomic.Int64 // nanoseconds; valid when the count is not zero
	count    atomic.Uint64

	// exemplars holds the last sampled measurement of each bucket (zero
	// Time: none), as the SDK's aligned bucket reservoir does; only
	// sampled records take the lock.
	exMu      sync.Mutex
	exemplars []pathway.Exemplar
}

// init sets the bucket boundaries, in seconds.
func (h *histogram) init(seconds []float64) {
	h.bounds, h.counts = make([]int64, len(seconds)), make([]atomic.Uint64, len(seconds)+1)
	h.exemplars = make([]pathway.Exemplar, len(seconds)+1)
	for i, s := range seconds {
		h.bounds[i] = int64(s * float64(time.Second))
	}
	h.min.Store(math.MaxInt64)
	h.max.Store(math.MinInt64)
}

func (h *histogram) record(d time.Duration, sc trace.SpanContext) {
	v := int64(d)
	i, _ := slices.BinarySearch(h.bounds, v) // first bound >= v
	h.counts[i].Add(1)
	if sc.IsSampled() {
		e := pathway.Exemplar{Value: d, Time: time.Now().UnixNano(), TraceID: sc.TraceID(), SpanID: sc.SpanID()}
		h.exMu.Lock()
		h.exemplars[i] = e
		h.exMu.Unlock()
	}
	h.sum.Add(v)
	for cur := h.min.Load(); v < cur && !h.min.CompareAndSwap(cur, v); cur = h.min.Load() {
	}
	for cur := h.max.Load(); v > cur && !h.max.CompareAndSwap(cur, v); cur = h.max.Load() {
	}
	h.count.Add(1)
}

// histState is a histogram's cumulative values at one collection.
type histState struct {
	counts []uint64
	sum    int64
}

// dataPoint returns the histogram's point, or false when it has nothing to
// report: cumulative, or with prev (delta temporality) the difference from
// the previous collection, whose state it updates. Concurrent records may
// be half-visible in one collection (a bucket counted before the total);
// the next collection is exact again.
func (h *histogram) dataPoint(attrs attribute.Set, start, now time.Time, prev *histState) (metricdata.HistogramDataPoint[float64], bool) {
	if h.counts == nil || h.count.Load() == 0 {
		return metricdata.HistogramDataPoint[float64]{}, false
	}
	dp := metricdata.HistogramDataPoint[float64]{
		Attributes:   attrs,
		StartTime:    start,
		Time:         now,
		Bounds:       make([]float64, len(h.bounds)),
		BucketCounts: make([]uint64, len(h.counts)),
	}
	for i, b := range h.bounds {
		dp.Bounds[i] = seconds(b)
	}
	sum := h.sum.Load()
	for i := range h.counts {
		dp.BucketCounts[i] = h.counts[i].Load()
	}
	if prev != nil { // delta: min and max are not known per interval
		cur := histState{counts: slices.Clone(dp.BucketCounts), sum: sum}
		if prev.counts != nil {
			for i := range dp.BucketCounts {
				dp.BucketCounts[i] -= prev.counts[i]
			}
			sum -= prev.sum
		}
		*prev = cur
	} else {
		dp.Min = metricdata.NewExtrema(seconds(h.min.Load()))
		dp.Max = metricdata.NewExtrema(seconds(h.max.Load()))
	}
	for _, c := range dp.BucketCounts {
		dp.Count += c
	}
	if dp.Count == 0 {
		return metricdata.HistogramDataPoint[float64]{}, false
	}
	dp.Sum = seconds(sum)
	h.exMu.Lock()
	for _, e := range h.exemplars {
		if e.Time != 0 && (prev == nil || e.Time >= start.UnixNano()) {
			dp.Exemplars = append(dp.Exemplars, exemplar(e))
		}
	}
	h.exMu.Unlock()
	return dp, true
}

// exemplar converts a recorded exemplar to the SDK's form.
func exemplar(e pathway.Exemplar) metricdata.Exemplar[float64] {
	return metricdata.Exemplar[float64]{
		Time:    time.Unix(0, e.Time),
		Value:   e.Value.Seconds(),
		TraceID: append([]byte(nil), e.TraceID[:]...),
		SpanID:  append([]byte(nil), e.SpanID[:]...),
	}
}

func seconds(ns int64) float64 { return float64(ns) / float64(time.Second) }

// state returns the previous-collection state of key, creating it; nil
// with cumulative temporality. Call with m.collect held.
func state[T any](m *Metrics, key any) *T {
	if m.temporality != metricdata.DeltaTemporality {
		return nil
	}
	if m.prev == nil {
		m.prev = make(map[any]any)
	}
	if p, ok := m.prev[key].(*T); ok {
		return p
	}
	p := new(T)
	m.prev[key] = p
	return p
}

type queueWaitKey struct{ s *series }

// Produce returns the values of every series, grouped as the kafkatrace
// instrumentation scope: cumulative since NewMetrics, or with
// WithTemporality(DeltaTemporality) since the previous Produce. It
// implements sdkmetric.Producer.
func (m *Metrics) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	m.collect.Lock()
	defer m.collect.Unlock()
	now := time.Now()
	start := m.start
	if m.temporality == metricdata.DeltaTemporality {
		start = m.collected
	}
	m.collected = now
	var (
		sent, consumed   []metricdata.DataPoint[int64]
		sendDur, procDur []metricdata.HistogramDataPoint[float64]
		queueWait        []metricdata.HistogramDataPoint[float64]
		counter          = func(s *series) (metricdata.DataPoint[int64], bool) {
			v := s.count.Load()
			if prev := state[int64](m, s); prev != nil {
				v, *prev = v-*prev, v
			}
			return metricdata.DataPoint[int64]{Attributes: s.attrs, StartTime: start, Time: now, Value: v}, v > 0
		}
	)
	m.series.Range(func(key, value any) bool {
		k, s := key.(seriesKey), value.(*series)
		dur, hasDur := s.duration.dataPoint(s.attrs, start, now, state[histState](m, &s.duration))
		switch k.op {
		case telemetry.OpSend:
			if dp, ok := counter(s); ok {
				sent = append(sent, dp)
			}
			if hasDur {
				sendDur = append(sendDur, dur)
			}
		case telemetry.OpProcess:
			// Records are counted as consumed when processing starts, in
			// the series without error.type; durations by outcome.
			if dp, ok := counter(s); ok {
				consumed = append(consumed, dp)
			}
			if hasDur {
				procDur = append(procDur, dur)
			}
			if qw, ok := s.queueWait.dataPoint(s.attrs, start, now, state[histState](m, queueWaitKey{s})); ok {
				queueWait = append(queueWait, qw)
			}
		}
		return true
	})
	var out []metricdata.Metrics
	addSum := func(name, desc, unit string, dps []metricdata.DataPoint[int64]) {
		if len(dps) > 0 {
			out = append(out, metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: metricdata.Sum[int64]{
				DataPoints: dps, Temporality: m.temporality, IsMonotonic: true,
			}})
		}
	}
	addHist := func(name, desc, unit string, dps []metricdata.HistogramDataPoint[float64]) {
		if len(dps) > 0 {
			out = append(out, metricdata.Metrics{Name: name, Description: desc, Unit: unit, Data: metricdata.Histogram[float64]{
				DataPoints: dps, Temporality: m.temporality,
			}})
		}
	}
	addSum(messagingconv.ClientSentMessages{}.Name(), messagingconv.ClientSentMessages{}.Description(), messagingconv.ClientSentMessages{}.Unit(), sent)
	addHist(messagingconv.ClientOperationDuration{}.Name(), messagingconv.ClientOperationDuration{}.Description(), messagingconv.ClientOperationDuration{}.Unit(), sendDur)
	addSum(messagingconv.ClientConsumedMessages{}.Name(), messagingconv.ClientConsumedMessages{}.Description(), messagingconv.ClientConsumedMessages{}.Unit(), consumed)
	addHist(messagingconv.ProcessDuration{}.Name(), messagingconv.ProcessDuration{}.Description(), messagingconv.ProcessDuration{}.Unit(), procDur)
	addHist(telemetry.MetricQueueWait, "Time records spent in Kafka between their timestamp and the start of processing.", telemetry.MetricQueueWaitUnit, queueWait)
	if pw, ok := m.producePathways(start, now); ok {
		out = append(out, pw)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{
		Scope:   instrumentation.Scope{Name: ScopeName, SchemaURL: semconv.SchemaURL},
		Metrics: out,
	}}, nil
}

// recordSent counts a produced record and the time to its acknowledgement.
func (t *Tracer) recordSent(topic string, partition int32, d time.Duration, errType string, sc trace.SpanContext) {
	if t.metrics == nil {
		return
	}
	s := t.partition(topic, partition).send
	if errType != "" { // failed records have no partition
		s = t.metrics.seriesFor(seriesKey{op: telemetry.OpSend, topic: topic, partition: -1, errType: errType})
	}
	s.count.Add(1)
	s.duration.record(d, sc)
}

// recordProcessed records the duration of processing one record.
func (t *Tracer) recordProcessed(topic string, partition int32, d time.Duration, errType string, sc trace.SpanContext) {
	if t.metrics == nil {
		return
	}
	s := t.partition(topic, partition).process
	if errType != "" {
		s = t.metrics.seriesFor(seriesKey{op: telemetry.OpProcess, topic: topic, partition: partition, group: t.group, errType: errType})
	}
	s.duration.record(d, sc)
}
