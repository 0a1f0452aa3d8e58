// SPDX-License-Identifier: Apache-2.0

package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/topology"
)

// Config is the pipeline's settings, plain data: the shared configuration
// of every component. Its collaborators (providers, logger, messaging
// metrics) are Options of New.
type Config struct {
	// Kafka is the connection and topic-creation configuration.
	Kafka kafkaclient.Config
	// Stages are the pipeline's stages in order, each with its handler;
	// they name the topics. Default:
	// DefaultStages(messages.DefaultTopics()), retrieval then enrichment.
	Stages []Stage
	// Documents is the compacted documents topic every stage's workers
	// apply to their index (topology.Topology.Documents). Default:
	// messages.DefaultDocumentsTopic.
	Documents string
	// Worker tunes the workers; Group and Topic are filled in per stage.
	Worker consumers.Config
	// RecordQueryText puts query text on search spans (debugging only).
	RecordQueryText bool
	// RecordDocuments puts the documents found (id and score) on search
	// spans as gen_ai.retrieval.documents (opt-in, like the query text).
	RecordDocuments bool
	// SearchTimeout bounds one search of the default retrieval stage; a
	// request whose search overruns it is dead-lettered (see
	// retrieval.Config.SearchTimeout). Default:
	// retrieval.DefaultSearchTimeout; negative: no limit.
	SearchTimeout time.Duration
	// ServiceName identifies this process's pathway checkpoints (see
	// package pathway): its service.name. Default: "kretrieve".
	ServiceName string
	// DisablePathways turns the pathway header and checkpoints off: no
	// kretrieve.pathway.latency, no pathway header on produced records.
	// Default: on.
	DisablePathways bool
	// ParentBasedSampling says that the tracer provider's sampler follows the
	// parent's sampled flag (the SDK default), so unsampled records start no
	// spans at all; see kafkatrace.WithParentBasedSampling.
	ParentBasedSampling bool
	// RootSampler, the tracer provider's (tracing.Providers.RootSampler),
	// takes the sampling decision of root send spans without starting
	// the unsampled ones; see kafkatrace.WithRootSampler. Default: none.
	RootSampler kafkatrace.RootSampler
	// RetrievalTrustBoundary makes the first stage's workers (retrieval's
	// in the default pipeline), which consume the requests topic that
	// outside producers write to, a trust boundary: each request's process span starts a new trace sampled by
	// the tracer provider's sampler alone, linked to the record's context, and
	// the record's baggage is dropped except the TrustedBaggage members
	// (see kafkatrace.WithTrustBoundary). Internal hops stay parented.
	// Default: false.
	RetrievalTrustBoundary bool
	// TrustedBaggage lists the baggage keys that cross the retrieval
	// workers' trust boundary, and the gateway's when its own
	// gateway.Config.TrustedBaggage is nil. Default: none.
	TrustedBaggage []string
	// BaggageAttributes lists the baggage keys copied onto every process
	// span as kretrieve.baggage.<key> attributes; no other baggage ever
	// becomes an attribute (see kafkatrace.WithBaggageAttributes).
	// Default: none.
	BaggageAttributes []string
}

func (c Config) withDefaults() Config {
	c.Kafka = c.Kafka.WithDefaults()
	if c.Stages == nil {
		c.Stages = DefaultStages(messages.Topics{})
	}
	if c.ServiceName == "" {
		c.ServiceName = "kretrieve"
	}
	if c.Documents == "" {
		c.Documents = messages.DefaultDocumentsTopic
	}
	return c
}

// Validate reports configuration errors, among them a Stages list that is
// not a chain (see topology.Topology.Validate) or a stage without a handler
// that is not external.
func (c Config) Validate() error {
	c = c.withDefaults()
	errs := []error{c.Kafka.Validate(), c.Topology().Validate()}
	for _, s := range c.Stages {
		if s.NewHandler == nil && !s.External {
			errs = append(errs, fmt.Errorf("stage %s: no handler", s.Name))
		}
	}
	return errors.Join(errs...)
}

// Topology returns the stages' topology: what the ACLs, the collector,
// lag and the run summaries iterate.
func (c Config) Topology() topology.Topology {
	c = c.withDefaults()
	return topologyOf(c.Stages, c.Documents)
}

// topologyOf returns the topology of stages and the documents topic.
func topologyOf(stages []Stage, documents string) topology.Topology {
	t := topology.Topology{Stages: make([]topology.Stage, len(stages)), Documents: documents}
	for i, s := range stages {
		t.Stages[i] = s.Stage
	}
	return t
}

// Pipeline is a configured pipeline: its settings (Config) and its
// collaborators (Options). Its methods build the topics, workers, request
// clients and gateway, all the same way, for the binary and the tests.
type Pipeline struct {
	cfg Config
	options
	// clusterID is the Kafka cluster id (SetKafkaClusterID); nil or "":
	// unknown.
	clusterID atomic.Pointer[string]
}

// SetKafkaClusterID records the id of the Kafka cluster the pipeline's
// clients connect to (kafkaclient.WaitCluster learns it): every
// kafkatrace.Tracer made afterwards sets messaging.kafka.cluster.id on its
// spans and messaging metrics. Call it before starting clients; "" clears
// it.
func (p *Pipeline) SetKafkaClusterID(id string) { p.clusterID.Store(&id) }

// KafkaClusterID returns the id SetKafkaClusterID recorded, "" if none.
func (p *Pipeline) KafkaClusterID() string {
	if id := p.clusterID.Load(); id != nil {
		return *id
	}
	return ""
}

// New returns the pipeline of cfg, or cfg's validation error (see
// Config.Validate).
func New(cfg Config, opts ...Option) (*Pipeline, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Pipeline{cfg: cfg, options: newOptions(opts)}, nil
}

// Config returns the pipeline's settings, defaults filled in.
func (p *Pipeline) Config() Config { return p.cfg }

// Topology returns the pipeline's stages as data.
func (p *Pipeline) Topology() topology.Topology { return p.cfg.Topology() }

// tracer returns a kafkatrace.Tracer for one client of the given group ("" for none),
// a trust boundary for the records it consumes when boundary is set.
func (p *Pipeline) tracer(group string, boundary bool) *kafkatrace.Tracer {
	c := p.cfg
	opts := []kafkatrace.Option{
		kafkatrace.WithTracerProvider(p.collab.TracerProvider),
		kafkatrace.WithMetrics(p.metrics),
		kafkatrace.WithPropagator(p.collab.Propagator),
		kafkatrace.WithClientID(c.Kafka.ClientID),
		kafkatrace.WithConsumerGroup(group),
		kafkatrace.WithServerAddress(c.Kafka.Brokers[0]),
		kafkatrace.WithKafkaClusterID(p.KafkaClusterID()),
	}
	if c.ParentBasedSampling {
		opts = append(opts, kafkatrace.WithParentBasedSampling())
	}
	if c.RootSampler != nil {
		opts = append(opts, kafkatrace.WithRootSampler(c.RootSampler))
	}
	if boundary {
		opts = append(opts, kafkatrace.WithTrustBoundary(c.TrustedBaggage...))
	}
	if len(c.BaggageAttributes) > 0 {
		opts = append(opts, kafkatrace.WithBaggageAttributes(c.BaggageAttributes...))
	}
	if !c.DisablePathways {
		opts = append(opts, kafkatrace.WithPathways(c.ServiceName))
	}
	return kafkatrace.New(opts...)
}

// Tracer returns the kafkatrace.Tracer of a client of group ("" for none)
// that is not one of the pipeline's own, such as a dead-letter replay:
// the workers' settings (providers, messaging metrics, parent-based
// sampling, baggage attributes, pathways), without a trust boundary.
func (p *Pipeline) Tracer(group string) *kafkatrace.Tracer {
	return p.tracer(group, false)
}

// ClientOptions returns the franz-go options of a client of the pipeline's
// cluster (see kafkaclient.Options): its connection, logger and client
// metrics on the meter provider, then hooks.
func (p *Pipeline) ClientOptions(hooks ...kgo.Hook) []kgo.Opt {
	return kafkaclient.Options(p.cfg.Kafka, p.collab.Logger, p.collab.MeterProvider, hooks...)
}

// EnsureTopics creates the pipeline topics, their dead-letter topics and
// the documents topic (compacted: kafkaclient.EnsureCompactedTopics) and
// its dead-letter topic when missing.
func (p *Pipeline) EnsureTopics(ctx context.Context) error {
	client, err := kgo.NewClient(p.ClientOptions()...)
	if err != nil {
		return err
	}
	defer client.Close()
	t := p.Topology()
	var plain []string
	for _, topic := range t.All() {
		if topic != t.Documents {
			plain = append(plain, topic)
		}
	}
	if err := kafkaclient.EnsureTopics(ctx, client, p.cfg.Kafka, plain...); err != nil {
		return err
	}
	if t.Documents == "" {
		return nil
	}
	return kafkaclient.EnsureCompactedTopics(ctx, client, p.cfg.Kafka, t.Documents)
}

// NewWorker returns a worker of the stage named stage, its handler built
// by the stage's NewHandler with idx (which the default stages search and
// load documents from; a stage that needs no index may get nil).
func (p *Pipeline) NewWorker(stage string, idx Index) (*consumers.Worker, error) {
	cfg := p.cfg
	i := slices.IndexFunc(cfg.Stages, func(s Stage) bool { return s.Name == stage })
	if i < 0 {
		return nil, fmt.Errorf("no stage %q (stages: %s)", stage, strings.Join(cfg.Topology().Names(), ", "))
	}
	st := cfg.Stages[i]
	if st.External {
		return nil, fmt.Errorf("stage %s is external: its workers run outside this program", st.Name)
	}
	wc := cfg.Worker
	if wc.Group == "" {
		wc.Group = st.Group
	}
	wc.Topic = st.Input
	applyLimits(&wc, st.Limits)
	h, err := st.NewHandler(StageEnv{Config: cfg, Stage: st.Stage, Index: idx,
		TracerProvider: p.collab.TracerProvider, MeterProvider: p.collab.MeterProvider, Logger: p.collab.Logger})
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", st.Name, err)
	}
	boundary := i == 0 && cfg.RetrievalTrustBoundary
	return consumers.New(wc, p.tracer(wc.Group, boundary), h, p.ClientOptions(), consumers.WithLogger(p.collab.Logger),
		consumers.WithMeterProvider(p.collab.MeterProvider))
}

// NewClient returns a request client publishing to the requests topic. With
// collect, it also starts a results.Collector (from the current end of the outcome
// topics) so calls can wait for their outcomes. Close it when done. Its
// records are bounded by RequestDeliveryTimeout, not by their callers'
// contexts (see producer.Publisher).
func (p *Pipeline) NewClient(ctx context.Context, collect bool) (*producer.Client, error) {
	return p.newClient(ctx, collect)
}

// RequestDeliveryTimeout is how long a request client's record may wait
// for the broker (kgo.RecordDeliveryTimeout) before franz-go fails it, when
// it was not written; the gateway's client uses its --timeout instead.
const RequestDeliveryTimeout = 30 * time.Second

// newClient is NewClient with more options for the publisher's client.
func (p *Pipeline) newClient(ctx context.Context, collect bool, pubOpts ...kgo.Opt) (*producer.Client, error) {
	tracer := p.tracer("", false)
	requests := p.Topology().Requests()
	pubClient, err := kgo.NewClient(slices.Concat(p.ClientOptions(tracer), []kgo.Opt{kgo.DefaultProduceTopic(requests), kgo.RecordDeliveryTimeout(RequestDeliveryTimeout)}, pubOpts)...)
	if err != nil {
		return nil, fmt.Errorf("publisher client: %w", err)
	}
	var col *results.Collector
	if collect {
		if col, err = results.NewCollector(ctx, p.ClientOptions(), tracer, p.Topology(), results.WithLogger(p.collab.Logger)); err != nil {
			pubClient.Close()
			return nil, err
		}
	}
	return producer.NewClient(ctx, producer.NewPublisher(pubClient, requests), col, producer.WithTracerProvider(p.collab.TracerProvider)), nil
}

// Workers runs a set of workers until their context is done.
type Workers struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
	all  []*consumers.Worker
}

// StartWorkers starts the workers of every stage over idx: replicas[name]
// workers for the stage called name, one for a stage it does not list;
// none for an external stage (Stage.External).
func (p *Pipeline) StartWorkers(ctx context.Context, idx Index, replicas map[string]int) (*Workers, error) {
	ws := &Workers{}
	for _, st := range p.cfg.Stages {
		if st.External {
			continue
		}
		for range max(replicas[st.Name], 1) {
			w, err := p.NewWorker(st.Name, idx)
			if err != nil {
				for _, w := range ws.all {
					w.Client().Close()
				}
				return nil, err
			}
			ws.all = append(ws.all, w)
		}
	}
	for _, w := range ws.all {
		ws.wg.Go(func() {
			if err := w.Run(ctx); err != nil {
				ws.mu.Lock()
				ws.errs = append(ws.errs, err)
				ws.mu.Unlock()
			}
		})
	}
	return ws, nil
}

// All returns the workers.
func (ws *Workers) All() []*consumers.Worker { return ws.all }

// Wait waits for every worker to stop and returns their errors.
func (ws *Workers) Wait() error {
	ws.wg.Wait()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return errors.Join(ws.errs...)
}

// Ready returns a readiness check: Kafka answers and every pipeline topic
// and dead-letter topic exists.
func (p *Pipeline) Ready() func(context.Context) error {
	return func(ctx context.Context) error {
		client, err := kgo.NewClient(p.ClientOptions()...)
		if err != nil {
			return err
		}
		defer client.Close()
		// The pipeline topics and their dead-letter topics: what the
		// gateway uses (not the documents topic, which only workers read).
		t := p.Topology()
		all := append(t.Topics(), t.DeadLetterTopics()...)
		topics, err := kadm.NewClient(client).ListTopics(ctx, all...)
		if err != nil {
			return fmt.Errorf("kafka: %w", err)
		}
		for _, t := range all {
			if !topics.Has(t) {
				return fmt.Errorf("topic %s does not exist", t)
			}
			if err := topics[t].Err; err != nil {
				return fmt.Errorf("topic %s: %w", t, err)
			}
		}
		return nil
	}
}

// NewGateway returns an HTTP gateway publishing through a new request client
// with a collector (close it with the returned Client's Close). The
// collector's dropped-result counters are exported on the meter provider.
// Until ctx is done, the gateway measures the queue wait of the first
// edge every QueueWaitInterval and refuses the searches it would make
// miss their deadline (gateway.WithQueueWait).
func (p *Pipeline) NewGateway(ctx context.Context, gw gateway.Config) (*gateway.Gateway, *producer.Client, error) {
	if gw.TrustedBaggage == nil {
		gw.TrustedBaggage = p.cfg.TrustedBaggage
	}
	// A request's record is bounded by the gateway's timeout (franz-go
	// allows no less than 1 s), not by its caller's context (see
	// producer.Publisher): franz-go fails it past the timeout when it was
	// not written, and its caller is told so.
	client, err := p.newClient(ctx, true, kgo.RecordDeliveryTimeout(max(cmp.Or(gw.Timeout, gateway.DefaultTimeout), time.Second)))
	if err != nil {
		return nil, nil, err
	}
	if _, err := client.Collector.RegisterMetrics(p.collab.MeterProvider); err != nil {
		p.collab.Logger.WarnContext(ctx, "collector metrics not registered", "err", err)
	}
	opts := []gateway.Option{gateway.WithTracerProvider(p.collab.TracerProvider), gateway.WithMeterProvider(p.collab.MeterProvider),
		gateway.WithPropagator(p.collab.Propagator), gateway.WithLogger(p.collab.Logger)}
	if stages := p.Topology().Stages; len(stages) > 0 {
		edge := &firstEdge{baseOpts: p.ClientOptions(), group: stages[0].Group, topic: stages[0].Input, logger: p.collab.Logger}
		go edge.run(ctx)
		opts = append(opts, gateway.WithQueueWait(edge.Wait))
	}
	g, err := gateway.New(gw, client, p.Ready(), opts...)
	if err != nil {
		_ = client.Close(ctx)
		return nil, nil, err
	}
	return g, client, nil
}

// GoStdlibIndexName names the index built from the Go standard library.
const GoStdlibIndexName = "go-stdlib"

// OpenIndex opens the on-disk index in dir read-only or, when dir is empty,
// builds an in-memory index of the Go standard library documentation found
// in the local Go installation. Close the index when done.
func OpenIndex(ctx context.Context, dir string) (*search.Index, error) {
	if dir != "" {
		return search.Open(dir)
	}
	docs, err := corpus.GoStdlib(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("go corpus: %w", err)
	}
	return search.NewMemory(ctx, GoStdlibIndexName, docs)
}

// Logger returns the pipeline's logger.
func (p *Pipeline) Logger() *slog.Logger { return p.collab.Logger }
