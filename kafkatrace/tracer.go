package kafkatrace

import (
	"net"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span and metric this package creates.
const ScopeName = "github.com/kretrieve/kretrieve/kafkatrace"

// Option configures a Tracer.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	prop     propagation.TextMapPropagator
	clientID string
	group    string
	server   string
}

// WithTracerProvider sets the tracer provider. Default: otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithMeterProvider sets the meter provider for the queue-wait histogram.
// Default: otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.mp = mp })
}

// WithPropagator sets the propagator used for record headers.
// Default: otel.GetTextMapPropagator().
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.prop = p })
}

// WithClientID sets messaging.client.id on every span. Default: unset.
func WithClientID(id string) Option {
	return optionFunc(func(c *config) { c.clientID = id })
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
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	propKeys  []string
	group     string
	common    []attribute.KeyValue // system, client id, server address/port
	queueWait metric.Float64Histogram

	names   sync.Map // topic -> *topicNames
	qwAttrs sync.Map // partitionKey -> metric.MeasurementOption
	sets    sync.Map // metricKey -> attribute.Set
	metrics messagingMetrics
}

type topicNames struct{ send, wait, process string }

type partitionKey struct {
	topic     string
	partition int32
}

// New returns a Tracer.
func New(opts ...Option) *Tracer {
	c := config{}
	for _, o := range opts {
		o.apply(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	t := &Tracer{
		tracer:   c.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:     c.prop,
		propKeys: c.prop.Fields(),
		group:    c.group,
		common:   []attribute.KeyValue{semconv.MessagingSystemKafka},
	}
	if c.clientID != "" {
		t.common = append(t.common, semconv.MessagingClientID(c.clientID))
	}
	if host, port, err := net.SplitHostPort(c.server); err == nil {
		t.common = append(t.common, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			t.common = append(t.common, semconv.ServerPort(p))
		}
	}
	meter := c.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	// A histogram that cannot be created is replaced by a no-op one by the
	// API, so the error only needs reporting, not handling.
	qw, err := meter.Float64Histogram("kretrieve.messaging.queue_wait.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Time records spent in Kafka between their timestamp and the start of processing."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
	if err != nil {
		otel.Handle(err)
	}
	t.queueWait = qw
	t.metrics = newMessagingMetrics(meter)
	return t
}

// Propagator returns the propagator the Tracer injects and extracts with.
func (t *Tracer) Propagator() propagation.TextMapPropagator { return t.prop }

// ConsumerGroup returns the consumer group the Tracer was configured with.
func (t *Tracer) ConsumerGroup() string { return t.group }

func (t *Tracer) namesFor(topic string) *topicNames {
	if n, ok := t.names.Load(topic); ok {
		return n.(*topicNames)
	}
	n, _ := t.names.LoadOrStore(topic, &topicNames{
		send:    OpSend + " " + topic,
		wait:    OpWait + " " + topic,
		process: OpProcess + " " + topic,
	})
	return n.(*topicNames)
}

// partitionMetricAttrs returns the cached attribute set of the queue-wait
// histogram for one partition, so recording a value does not allocate one.
func (t *Tracer) partitionMetricAttrs(topic string, partition int32) metric.MeasurementOption {
	k := partitionKey{topic, partition}
	if o, ok := t.qwAttrs.Load(k); ok {
		return o.(metric.MeasurementOption)
	}
	kvs := []attribute.KeyValue{
		semconv.MessagingSystemKafka,
		semconv.MessagingDestinationName(topic),
		semconv.MessagingDestinationPartitionID(strconv.Itoa(int(partition))),
	}
	if t.group != "" {
		kvs = append(kvs, semconv.MessagingConsumerGroupName(t.group))
	}
	o, _ := t.qwAttrs.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(kvs...)))
	return o.(metric.MeasurementOption)
}
