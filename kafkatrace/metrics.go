// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
)

// Bucket boundaries, in seconds. The messaging durations use the boundaries
// the semantic conventions advise for them; queue wait reaches further,
// since a backlog is measured in minutes.
var (
	durationBounds  = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	queueWaitBounds = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
)

// Metrics aggregates the messaging metrics of any number of Tracers in
// memory; [Metrics.Messaging] and [Metrics.Pathways] read them. It uses the
// OpenTelemetry API only: tracing.NewMetricsProducer hands them to the SDK
// when a reader collects. Recording a record costs a few atomic additions on counters
// cached per partition: no attribute sets are resolved and nothing is
// allocated per record, where the SDK's synchronous instruments cost about
// half a microsecond per measurement (five per record).
//
// The metrics, as tracing.NewMetricsProducer exports them (cumulative
// since NewMetrics by default):
//
//	messaging.client.sent.messages       counter   per topic, partition (error.type on failure)
//	messaging.client.operation.duration  histogram send: produce until the broker's ack
//	messaging.client.consumed.messages   counter   per topic, partition, group
//	messaging.process.duration           histogram process (error.type on failure)
//	kretrieve.messaging.queue_wait.duration histogram record timestamp until processing
//
// Every series carries messaging.system and messaging.operation.name; the
// consumer group is messaging.consumer.group.name, the cluster
// messaging.kafka.cluster.id (Tracers made WithKafkaClusterID). The
// histograms keep the last exemplar of a sampled record per bucket (see
// [WithExemplarFilter] for other choices). With [WithPathways],
// kretrieve.pathway.latency is recorded too (see [otelnames.MetricPathwayLatency]).
// A Metrics is safe for concurrent use.
type Metrics struct {
	start  time.Time
	series sync.Map // seriesKey -> *series

	// pathways holds the pathway latency series, at most maxPathways
	// of them beyond one overflow series per checkpoint.
	pathways    sync.Map // pathwaySeriesKey -> *pathwaySeries
	nPathways   atomic.Int64
	maxPathways int64
	// pathwayIdle is how long a series may measure nothing before a new
	// pathway may take its place; lastSweep is when (unix ns) the series
	// were last looked over for that.
	pathwayIdle time.Duration
	lastSweep   atomic.Int64
	// exemplars is the exemplar filter (WithExemplarFilter).
	exemplars ExemplarFilter
}

// DefaultMaxPathways is the default bound on pathway series per Metrics.
const DefaultMaxPathways = 256

// DefaultPathwayIdle is how long a pathway series may measure nothing
// before it makes room for a new one when the bound is reached: well over
// any scrape or publish interval, so that a pathway still in use keeps
// its series, and short enough that a burst of hostile hashes does not
// push real pathways into the overflow series for long.
const DefaultPathwayIdle = 10 * time.Minute

// MetricsOption configures a Metrics.
type MetricsOption interface{ applyMetrics(*Metrics) }

type metricsOptionFunc func(*Metrics)

func (f metricsOptionFunc) applyMetrics(m *Metrics) { f(m) }

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
	m := &Metrics{start: time.Now(), maxPathways: DefaultMaxPathways, pathwayIdle: DefaultPathwayIdle}
	global.Apply(m, opts, MetricsOption.applyMetrics)
	return m
}

// Start returns the time NewMetrics was called: the start of every
// cumulative series.
func (m *Metrics) Start() time.Time { return m.start }

// QueueWaitBounds returns the bucket boundaries of [otelnames.MetricQueueWait], in
// seconds.
func QueueWaitBounds() []float64 { return slices.Clone(queueWaitBounds) }

// seriesKey identifies the series of one operation on one partition.
type seriesKey struct {
	op        string // otelnames.OpSend or otelnames.OpProcess
	cluster   string // messaging.kafka.cluster.id; "": unknown
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
	if k.cluster != "" {
		kvs = append(kvs, otelnames.KafkaClusterID.String(k.cluster))
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
	if k.op == otelnames.OpProcess {
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

// HistogramStats is the state of one explicit-bucket histogram of a
// [Metrics], read with atomic loads: concurrent records may be
// half-visible (a bucket counted before the total), the next read is
// exact again.
type HistogramStats struct {
	// Bounds are the inclusive upper bounds of the buckets, in
	// nanoseconds; nil for a histogram the series does not keep.
	Bounds []int64
	// Count is the number of measurements, read before the buckets.
	Count uint64
	// Counts holds one count per bucket, the last one above every bound.
	Counts []uint64
	// Sum, Min and Max are in nanoseconds; Min and Max are valid when
	// Count is not zero.
	Sum, Min, Max int64
	// Exemplars holds the last sampled measurement of each bucket that has
	// one.
	Exemplars []pathway.Exemplar
}

// stats returns the histogram's values.
func (h *histogram) stats() HistogramStats {
	if h.counts == nil {
		return HistogramStats{}
	}
	hs := HistogramStats{Bounds: h.bounds, Count: h.count.Load(), Counts: make([]uint64, len(h.counts))}
	hs.Sum = h.sum.Load()
	for i := range h.counts {
		hs.Counts[i] = h.counts[i].Load()
	}
	hs.Min, hs.Max = h.min.Load(), h.max.Load()
	h.exMu.Lock()
	for _, e := range h.exemplars {
		if e.Time != 0 {
			hs.Exemplars = append(hs.Exemplars, e)
		}
	}
	h.exMu.Unlock()
	return hs
}

// MessagingStats is the state of one messaging series: one operation on
// one partition, by outcome.
type MessagingStats struct {
	// Op is otelnames.OpSend or otelnames.OpProcess.
	Op string
	// Attrs are the series' attributes (messaging.*, error.type).
	Attrs attribute.Set
	// Count is the number of records sent, or consumed (counted in the
	// series without error.type when processing starts).
	Count int64
	// Duration is the send (produce until the broker's ack) or process
	// duration.
	Duration HistogramStats
	// QueueWait is the queue wait of processed records (otelnames.OpProcess only).
	QueueWait HistogramStats
}

// Messaging returns the cumulative state of every messaging series, in no
// particular order.
func (m *Metrics) Messaging() []MessagingStats {
	var out []MessagingStats
	m.series.Range(func(key, value any) bool {
		k, s := key.(seriesKey), value.(*series)
		out = append(out, MessagingStats{Op: k.op, Attrs: s.attrs, Count: s.count.Load(), Duration: s.duration.stats(), QueueWait: s.queueWait.stats()})
		return true
	})
	return out
}

// recordSent counts a produced record and the time to its acknowledgement.
func (t *Tracer) recordSent(topic string, partition int32, d time.Duration, errType string, sc trace.SpanContext) {
	if t.metrics == nil {
		return
	}
	s := t.partition(topic, partition).send
	if errType != "" { // failed records have no partition
		s = t.metrics.seriesFor(seriesKey{op: otelnames.OpSend, cluster: t.clusterID, topic: topic, partition: -1, errType: errType})
	}
	s.count.Add(1)
	s.duration.record(d, t.metrics.exemplarContext(sc))
}

// recordProcessed records the duration of processing one record.
func (t *Tracer) recordProcessed(topic string, partition int32, d time.Duration, errType string, sc trace.SpanContext) {
	if t.metrics == nil {
		return
	}
	s := t.partition(topic, partition).process
	if errType != "" {
		s = t.metrics.seriesFor(seriesKey{op: otelnames.OpProcess, cluster: t.clusterID, topic: topic, partition: partition, group: t.group, errType: errType})
	}
	s.duration.record(d, t.metrics.exemplarContext(sc))
}

// WithPathwayIdle sets how long a pathway series may measure nothing
// before it makes room for a new pathway, once the Metrics hold
// WithMaxPathways series: the series is dropped (a series made anew for
// its pathway later counts from zero, read as a counter reset). Zero or
// less is ignored. Default: DefaultPathwayIdle.
func WithPathwayIdle(d time.Duration) MetricsOption {
	return metricsOptionFunc(func(m *Metrics) {
		if d > 0 {
			m.pathwayIdle = d
		}
	})
}
