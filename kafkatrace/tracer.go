// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// ScopeName is the instrumentation scope of every span and metric this package creates.
const ScopeName = "github.com/kretrieve/kretrieve/kafkatrace"

// Option configures a Tracer. Only this package's With* functions make
// one; a nil Option is ignored.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tp          trace.TracerProvider
	metrics     *Metrics
	prop        propagation.TextMapPropagator
	clientID    string
	clusterID   string
	group       string
	server      string
	parentBased bool
	boundary    bool
	trusted     []string // baggage keys that cross the trust boundary
	bagAttrs    []string // baggage keys copied onto process spans
	pathways    bool
	service     string
	root        RootSampler
}

// WithTracerProvider sets the tracer provider; nil is ignored. Default: the
// global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithMetrics records the messaging metrics of every record in m (see
// [Metrics]). Default: no metrics.
func WithMetrics(m *Metrics) Option {
	return optionFunc(func(c *config) { c.metrics = m })
}

// WithParentBasedSampling tells the Tracer that its tracer provider's sampler
// follows the parent's sampled flag, as the SDK's default
// ParentBased(AlwaysSample) and OTEL_TRACES_SAMPLER=parentbased_* do. Records
// whose trace context is valid and not sampled then skip span creation
// altogether: their context passes through to handlers and downstream
// records unchanged, so an unsampled record costs the header parse and a few
// atomic counter updates. Do not set it with a sampler that may sample a
// child of an unsampled parent. Default: off (every record goes through the
// provider's sampler).
func WithParentBasedSampling() Option {
	return optionFunc(func(c *config) { c.parentBased = true })
}

// WithTrustBoundary makes the Tracer's consumers a trust boundary: records
// come from producers outside the system, whose trace context is not to be
// trusted. StartProcess then starts every process span as a new root,
// sampled by the tracer provider's own sampler (the record's sampled flag
// counts for nothing, so an outside producer can neither force sampling
// nor inflate our traces), linked to the record's context rather than
// parented by it. The record's baggage is dropped except the members whose
// keys are listed in allowedBaggage. Records the Tracer produces are not
// affected. Default: off (a record's context is continued, baggage and
// all).
func WithTrustBoundary(allowedBaggage ...string) Option {
	return optionFunc(func(c *config) {
		c.boundary = true
		c.trusted = slices.Clone(allowedBaggage)
	})
}

// WithBaggageAttributes copies the baggage members with these keys, when a
// record's context carries them, onto its process span as attributes named
// [otelnames.Baggage](key). No other baggage ever becomes an attribute. At a
// trust boundary only members that cross it (see [WithTrustBoundary]) can
// be copied. Default: none.
func WithBaggageAttributes(keys ...string) Option {
	return optionFunc(func(c *config) { c.bagAttrs = slices.Clone(keys) })
}

// WithPropagator sets the propagator used for record headers; nil is
// ignored. Default: the global propagator (otel.GetTextMapPropagator()).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.prop = p })
}

// WithClientID sets messaging.client.id on every span. Default: unset.
func WithClientID(id string) Option {
	return optionFunc(func(c *config) { c.clientID = id })
}

// WithKafkaClusterID sets messaging.kafka.cluster.id
// ([otelnames.KafkaClusterID]) to id on every span and on every messaging
// metric series the Tracer records: the id the brokers report in their
// Metadata response (kafkaclient.Check learns it). The attribute is built
// once, here, so it costs nothing per record. Default: unset ("" too).
func WithKafkaClusterID(id string) Option {
	return optionFunc(func(c *config) { c.clusterID = id })
}

// WithConsumerGroup sets messaging.consumer.group.name on wait and process
// spans and on the queue-wait histogram. Default: unset (direct consumers).
func WithConsumerGroup(group string) Option {
	return optionFunc(func(c *config) { c.group = group })
}

// WithServerAddress sets server.address and server.port from a "host:port"
// bootstrap address. Default: unset.
func WithServerAddress(hostPort string) Option {
	return optionFunc(func(c *config) { c.server = hostPort })
}

// Tracer creates send, wait and process spans for Kafka records. It is safe
// for concurrent use. Install it on a client with kgo.WithHooks(t) to trace
// every produced record; call StartProcess for every consumed record.
type Tracer struct {
	tracer      trace.Tracer
	prop        propagation.TextMapPropagator
	propKeys    []string
	ownKeys     []string // propKeys, and the pathway header with pathways
	group       string
	clusterID   string               // "": unknown
	common      []attribute.KeyValue // client id, cluster id, server address/port
	client      []attribute.KeyValue // client id, cluster id
	server      []attribute.KeyValue // server address/port
	metrics     *Metrics             // nil: no metrics
	parentBased bool
	// root takes the decision of root send spans without the provider
	// (WithRootSampler), and tp is the provider their non-recording
	// spans report; nil without.
	root RootSampler
	tp   trace.TracerProvider
	// boundary: process spans are new roots linked to the record's
	// context, whose baggage keeps only the trusted keys.
	boundary bool
	trusted  map[string]bool
	// bagAttrs are the baggage members copied onto process spans.
	bagAttrs []baggageAttr
	// w3c is true when the propagator writes exactly the W3C headers
	// (traceparent and tracestate, and baggage when baggage is true):
	// Inject and Extract then encode and parse traceparent directly on
	// the header bytes and use the library for the rest.
	w3c, baggage bool
	// pathways: records carry a pathway header and are measured at
	// checkpoints of service (see WithPathways).
	pathways bool
	service  string
	// sends hands out the produce hooks' per-record state, and roots the
	// non-recording spans of roots a RootSampler did not sample.
	sends slabs[sendContext]
	roots slabs[rootSpan]

	topics     sync.Map // topic -> *topicNames
	partitions sync.Map // partitionKey -> *partitionState
	// recent caches partitions for lookups without hashing (see
	// partition); recentMu serialises its copy-on-write updates.
	recent   atomic.Pointer[[]*recentTopic]
	recentMu sync.Mutex
}

type topicNames struct {
	send, wait, process string
	// sendStart are the attributes a send span starts with: the messaging
	// conventions' sampling-relevant ones known before the partition
	// (system, operation name and type, destination, server). sendAttrs
	// and waitAttrs are the send and wait spans' start options, built once
	// per topic so that passing them costs no allocation; the rest are set
	// once the span is known to be recording. A process span's start
	// attributes are its partition's (partitionState.processStart).
	sendStart            []attribute.KeyValue
	sendAttrs, waitAttrs trace.SpanStartOption
	// in and out are the topic's pathway checkpoints; nil without
	// pathways.
	in, out *checkpointInfo
}

type partitionKey struct {
	topic     string
	partition int32
}

// partitionState is what a Tracer caches per partition so that per-record
// work neither formats nor looks up anything twice.
type partitionState struct {
	names *topicNames
	// send and process are the metric series of successful records; nil
	// without metrics.
	send, process *series
	// consumed holds the attributes every wait and process span of the
	// partition carries beyond messaging.system and the destination (set
	// at start): client id, server, partition, group.
	consumed []attribute.KeyValue
	// partitionID is messaging.destination.partition.id.
	partitionID attribute.KeyValue
	// processStart is the process span's start option: the messaging
	// conventions' sampling-relevant attributes (system, operation name
	// and type, destination, partition, server). processRest are the
	// partition's other process span attributes: client id, group.
	processStart trace.SpanStartOption
	processRest  []attribute.KeyValue
	// inCache and outCache are the pathway series last used by the
	// partition's consumed and produced records.
	inCache, outCache atomic.Pointer[pathwaySeries]
	// records hands out the contexts StartProcess returns.
	records slabs[recordContext]
}

// New returns a Tracer.
func New(opts ...Option) *Tracer {
	c := config{}
	global.Apply(&c, opts, Option.apply)
	c.tp, c.prop = global.TracerProvider(c.tp), global.Propagator(c.prop)
	t := &Tracer{
		tracer:      c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:        c.prop,
		propKeys:    c.prop.Fields(),
		group:       c.group,
		clusterID:   c.clusterID,
		metrics:     c.metrics,
		parentBased: c.parentBased,
		pathways:    c.pathways,
		service:     c.service,
	}
	if c.root != nil && spanKey != nil {
		t.root, t.tp = c.root, c.tp
	}
	t.w3c, t.baggage = tracecontext.W3CFields(t.propKeys)
	t.ownKeys = t.propKeys
	if t.pathways {
		t.ownKeys = append(slices.Clone(t.propKeys), pathway.HeaderKey)
	}
	if c.boundary {
		t.boundary = true
		t.trusted = make(map[string]bool, len(c.trusted))
		for _, k := range c.trusted {
			t.trusted[k] = true
		}
	}
	for _, k := range c.bagAttrs {
		t.bagAttrs = append(t.bagAttrs, baggageAttr{k, otelnames.Baggage(k)})
	}
	if c.clientID != "" {
		t.client = append(t.client, semconv.MessagingClientID(c.clientID))
	}
	if c.clusterID != "" {
		t.client = append(t.client, otelnames.KafkaClusterID.String(c.clusterID))
	}
	if host, port, err := net.SplitHostPort(c.server); err == nil {
		t.server = append(t.server, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			t.server = append(t.server, semconv.ServerPort(p))
		}
	}
	t.common = append(slices.Clip(t.client), t.server...)
	return t
}

// Propagator returns the propagator the Tracer injects and extracts with.
func (t *Tracer) Propagator() propagation.TextMapPropagator { return t.prop }

// ConsumerGroup returns the consumer group the Tracer was configured with.
func (t *Tracer) ConsumerGroup() string { return t.group }

func (t *Tracer) namesFor(topic string) *topicNames {
	if n, ok := t.topics.Load(topic); ok {
		return n.(*topicNames)
	}
	dest := semconv.MessagingDestinationName(topic)
	names := &topicNames{
		send:      otelnames.SendSpan(topic),
		wait:      otelnames.WaitSpan(topic),
		process:   otelnames.ProcessSpan(topic),
		sendStart: append([]attribute.KeyValue{semconv.MessagingSystemKafka, semconv.MessagingOperationName(otelnames.OpSend), semconv.MessagingOperationTypeSend, dest}, t.server...),
		waitAttrs: trace.WithAttributes(semconv.MessagingSystemKafka, dest),
	}
	names.sendAttrs = trace.WithAttributes(names.sendStart...)
	if t.pathways {
		names.in = newCheckpoint(t.service, t.group, topic, pathway.In)
		names.out = newCheckpoint(t.service, t.group, topic, pathway.Out)
	}
	n, _ := t.topics.LoadOrStore(topic, names)
	return n.(*topicNames)
}

// partition returns the cached state of a partition. It runs several
// times per record, so the common case is a scan of a short list of
// topics and an index into the topic's partitions, without hashing.
func (t *Tracer) partition(topic string, partition int32) *partitionState {
	if list := t.recent.Load(); list != nil {
		for _, ts := range *list {
			if ts.topic == topic {
				if ps := ts.parts.Load(); ps != nil && partition >= 0 && int(partition) < len(*ps) {
					if p := (*ps)[partition]; p != nil {
						return p
					}
				}
				break
			}
		}
	}
	return t.partitionSlow(topic, partition)
}

// maxRecentTopics and maxIndexedPartition bound the lookup cache of
// partition: a Tracer on more topics, or a partition beyond, is looked up
// in the maps only.
const (
	maxRecentTopics     = 16
	maxIndexedPartition = 4096
)

// recentTopic is a topic's entry in the lookup cache: its partitions'
// states indexed by partition number (copy on write).
type recentTopic struct {
	topic string
	parts atomic.Pointer[[]*partitionState]
}

// partitionSlow looks the partition up in the maps, creating its state,
// and adds it to the lookup cache.
func (t *Tracer) partitionSlow(topic string, partition int32) *partitionState {
	k := partitionKey{topic, partition}
	if p, ok := t.partitions.Load(k); ok {
		t.remember(topic, partition, p.(*partitionState))
		return p.(*partitionState)
	}
	p := &partitionState{
		names:       t.namesFor(topic),
		partitionID: semconv.MessagingDestinationPartitionID(strconv.Itoa(int(partition))),
	}
	p.consumed = append(p.consumed, t.common...)
	p.consumed = append(p.consumed, p.partitionID)
	p.processStart = trace.WithAttributes(append([]attribute.KeyValue{semconv.MessagingSystemKafka, semconv.MessagingOperationName(otelnames.OpProcess),
		semconv.MessagingOperationTypeProcess, semconv.MessagingDestinationName(topic), p.partitionID}, t.server...)...)
	p.processRest = append(p.processRest, t.client...)
	if t.group != "" {
		group := semconv.MessagingConsumerGroupName(t.group)
		p.consumed = append(p.consumed, group)
		p.processRest = append(p.processRest, group)
	}
	if t.metrics != nil {
		p.send = t.metrics.seriesFor(seriesKey{op: otelnames.OpSend, cluster: t.clusterID, topic: topic, partition: partition})
		p.process = t.metrics.seriesFor(seriesKey{op: otelnames.OpProcess, cluster: t.clusterID, topic: topic, partition: partition, group: t.group})
	}
	actual, _ := t.partitions.LoadOrStore(k, p)
	t.remember(topic, partition, actual.(*partitionState))
	return actual.(*partitionState)
}

// remember adds a partition's state to the lookup cache.
func (t *Tracer) remember(topic string, partition int32, p *partitionState) {
	if partition < 0 || partition >= maxIndexedPartition {
		return
	}
	t.recentMu.Lock()
	defer t.recentMu.Unlock()
	var rt *recentTopic
	var list []*recentTopic
	if l := t.recent.Load(); l != nil {
		list = *l
	}
	for _, r := range list {
		if r.topic == topic {
			rt = r
		}
	}
	if rt == nil {
		if len(list) >= maxRecentTopics {
			return
		}
		rt = &recentTopic{topic: topic}
		list = append(slices.Clone(list), rt)
		t.recent.Store(&list)
	}
	var parts []*partitionState
	if ps := rt.parts.Load(); ps != nil {
		parts = *ps
	}
	if int(partition) >= len(parts) {
		grown := make([]*partitionState, partition+1)
		copy(grown, parts)
		parts = grown
	} else {
		parts = slices.Clone(parts)
	}
	parts[partition] = p
	rt.parts.Store(&parts)
}

// skip reports whether spans under span (a context's current span) need
// not be started: the Tracer trusts a parent-based sampler and span is
// valid, unsampled and not recording.
func (t *Tracer) skip(span trace.Span) bool {
	if !t.parentBased {
		return false
	}
	sc := span.SpanContext()
	return sc.IsValid() && !sc.IsSampled() && !span.IsRecording()
}
