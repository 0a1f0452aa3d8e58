package consumers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// Config configures a Worker.
type Config struct {
	// Group is the consumer group. Required.
	Group string
	// Topic is the input topic. Required.
	Topic string
	// Concurrency is how many partitions are processed at once; records of
	// one partition are always processed in order. Default: 6.
	Concurrency int
	// MaxPollRecords caps the records taken from one poll. Default: 500.
	MaxPollRecords int
	// Attempts is how many times a transient handler error is tried in all
	// before the record is dead-lettered. Default: 3.
	Attempts int
	// RetryBackoff is the first retry's delay; it doubles up to 2 s. Default: 100 ms.
	RetryBackoff time.Duration
	// CommitTimeout bounds the final commit at shutdown. Default: 10 s.
	CommitTimeout time.Duration
	// SessionTimeout is how long the group waits for a member that stopped
	// heart-beating (a crashed worker) before giving its partitions to
	// others: the longest a SIGKILLed worker's partitions stall.
	// Default: 45 s (Kafka's default).
	SessionTimeout time.Duration
	// FetchMaxBytes caps one fetch response. franz-go buffers at most one
	// fetch per broker until it is polled, so the records held by a worker
	// are bounded by brokers × FetchMaxBytes plus MaxPollRecords in flight;
	// fetching pauses while the buffer is full. Default: 16 MiB.
	FetchMaxBytes int32
	// MaxRecordBytes caps a consumed record's key plus value. A larger
	// record is dead-lettered without being decoded. Default: 1 MiB
	// (DefaultMaxRecordBytes).
	MaxRecordBytes int
	// MaxHeaders caps a consumed record's header count. A record with more
	// is dead-lettered without being decoded. Default: 64.
	MaxHeaders int
	// MaxHeaderBytes caps the size of a consumed record's header keys and
	// values together. A record with more is dead-lettered without being
	// decoded. Default: 64 KiB.
	MaxHeaderBytes int
	// MaxDeadLetterBytes caps a dead letter's estimated size. A dead
	// letter that would be larger (the original record plus the reason
	// headers) keeps what fits of the original and gets a
	// kretrieve.dlq.truncated header; one that the broker still refuses as
	// too large is sent again with only its dead-letter headers and key. It
	// must stay below the producer's batch limit (franz-go's
	// ProducerBatchMaxBytes, 1,000,012 by default) and the dead-letter
	// topics' max.message.bytes (Kafka's default 1,048,588), and be at
	// least 4096. Default: 1,000,000 (DefaultMaxDeadLetterBytes).
	MaxDeadLetterBytes int
}

func (c Config) withDefaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = 6
	}
	if c.MaxPollRecords == 0 {
		c.MaxPollRecords = 500
	}
	if c.Attempts == 0 {
		c.Attempts = 3
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = 100 * time.Millisecond
	}
	if c.CommitTimeout == 0 {
		c.CommitTimeout = 10 * time.Second
	}
	if c.FetchMaxBytes == 0 {
		c.FetchMaxBytes = 16 << 20
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = 45 * time.Second
	}
	if c.MaxRecordBytes == 0 {
		c.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if c.MaxHeaders == 0 {
		c.MaxHeaders = DefaultMaxHeaders
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.MaxDeadLetterBytes == 0 {
		c.MaxDeadLetterBytes = DefaultMaxDeadLetterBytes
	}
	return c
}

// Validate reports configuration errors.
func (c Config) Validate() error {
	var errs []error
	if c.Group == "" {
		errs = append(errs, errors.New("group: required"))
	}
	if c.Topic == "" {
		errs = append(errs, errors.New("topic: required"))
	}
	if c.Concurrency < 0 || c.MaxPollRecords < 0 || c.Attempts < 0 || c.RetryBackoff < 0 || c.CommitTimeout < 0 || c.FetchMaxBytes < 0 || c.SessionTimeout < 0 {
		errs = append(errs, errors.New("concurrency, max poll records, attempts, retry backoff, commit timeout and fetch max bytes must not be negative"))
	}
	if c.MaxRecordBytes < 0 || c.MaxHeaders < 0 || c.MaxHeaderBytes < 0 || c.MaxDeadLetterBytes < 0 {
		errs = append(errs, errors.New("max record bytes, max headers, max header bytes and max dead letter bytes must not be negative"))
	}
	if c.MaxDeadLetterBytes > 0 && c.MaxDeadLetterBytes < 4096 {
		errs = append(errs, errors.New("max dead letter bytes: must be at least 4096"))
	}
	return errors.Join(errs...)
}

// Option configures a Worker beyond its Config.
type Option interface{ apply(*Worker) }

type optionFunc func(*Worker)

func (f optionFunc) apply(w *Worker) { f(w) }

// WithLogger sets the logger. Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return optionFunc(func(w *Worker) { w.logger = l }) }

// WithMiddleware adds middleware inside the default Recover, Limit and Retry. Default: none.
func WithMiddleware(mws ...Middleware) Option {
	return optionFunc(func(w *Worker) { w.middleware = append(w.middleware, mws...) })
}

// Worker consumes one topic as a member of one consumer group.
type Worker struct {
	cfg        Config
	client     *kgo.Client
	tracer     *kafkatrace.Tracer
	handler    Handler
	logger     *slog.Logger
	middleware []Middleware

	processed atomic.Int64
	dead      atomic.Int64

	mu          sync.Mutex
	uncommitted map[string]map[int32]kgo.EpochOffset // offsets whose commit failed
}

// New returns a Worker for cfg. clientOpts are the connection options
// (see kafkaclient.Options); New adds the group options and installs tracer
// as a hook so the outputs get send spans. tracer should be configured with
// the same consumer group.
func New(cfg Config, tracer *kafkatrace.Tracer, handler Handler, clientOpts []kgo.Opt, opts ...Option) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	if tracer == nil || handler == nil {
		return nil, errors.New("worker: tracer and handler are required")
	}
	w := &Worker{cfg: cfg.withDefaults(), tracer: tracer, logger: slog.Default(), uncommitted: make(map[string]map[int32]kgo.EpochOffset)}
	for _, o := range opts {
		o.apply(w)
	}
	limits := Limits{MaxRecordBytes: w.cfg.MaxRecordBytes, MaxHeaders: w.cfg.MaxHeaders, MaxHeaderBytes: w.cfg.MaxHeaderBytes}
	w.handler = Chain(handler, append([]Middleware{Recover(), Limit(limits), Retry(w.cfg.Attempts, w.cfg.RetryBackoff, 2*time.Second)}, w.middleware...)...)
	w.logger = w.logger.With("group", cfg.Group, "topic", cfg.Topic)

	all := append([]kgo.Opt{}, clientOpts...)
	all = append(all,
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.SessionTimeout(w.cfg.SessionTimeout),
		kgo.DisableAutoCommit(),
		// Partitions are not revoked while a polled batch is in flight: every
		// batch is committed before AllowRebalance, so a revoke never loses
		// progress and never hands a partition over mid-batch.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(w.onRevoked),
		kgo.OnPartitionsLost(func(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
			// Lost, not revoked: the group moved on without us, so owed
			// commits would be rejected; the new owner redelivers.
			w.mu.Lock()
			for topic, ps := range lost {
				for _, p := range ps {
					delete(w.uncommitted[topic], p)
				}
			}
			w.mu.Unlock()
			w.logger.WarnContext(ctx, "partitions lost", "partitions", lost)
		}),
		kgo.WithHooks(tracer),
		// Bounded memory: fetch responses are capped, and the outputs of
		// one poll (one per input, or a dead letter) fit the producer
		// buffer, which blocks rather than grows.
		kgo.FetchMaxBytes(w.cfg.FetchMaxBytes),
		kgo.FetchMaxPartitionBytes(min(w.cfg.FetchMaxBytes, 4<<20)),
		kgo.MaxBufferedRecords(2*w.cfg.MaxPollRecords),
	)
	client, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("worker client: %w", err)
	}
	w.client = client
	return w, nil
}

// Client returns the worker's Kafka client (for topic creation and admin).
func (w *Worker) Client() *kgo.Client { return w.client }

// Processed returns how many records the worker has finished (including dead-lettered ones).
func (w *Worker) Processed() int64 { return w.processed.Load() }

// DeadLettered returns how many records the worker has sent to a dead-letter topic.
func (w *Worker) DeadLettered() int64 { return w.dead.Load() }

// Run consumes until ctx is done, then finishes the batch in flight, commits
// what was acknowledged, leaves the group and closes the client.
func (w *Worker) Run(ctx context.Context) error {
	defer func() {
		// Offsets whose commit failed get one last try before leaving.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.CommitTimeout)
		w.retryUncommitted(cctx, w.client, nil)
		cancel()
		// The last poll blocked rebalances; leaving the group waits for that
		// block to be released.
		w.client.AllowRebalance()
		w.client.Close()
	}()
	w.logger.InfoContext(ctx, "worker started")
	for {
		fetches := w.client.PollRecords(ctx, w.cfg.MaxPollRecords)
		if fetches.IsClientClosed() {
			return nil
		}
		if ctx.Err() != nil {
			// Records polled at the moment of shutdown are not processed and
			// not committed: the group redelivers them.
			break
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			w.logger.WarnContext(ctx, "fetch error", "topic", topic, "partition", partition, "err", err)
		})
		w.processFetches(ctx, fetches)
		w.client.AllowRebalance()
	}
	w.logger.InfoContext(ctx, "worker stopping", "processed", w.processed.Load(), "dead_lettered", w.dead.Load())
	return nil
}

// partitionBatch tracks one partition's records of a poll.
type partitionBatch struct {
	topic     string
	partition int32
	last      *kgo.Record
	// firstFailed is the lowest offset whose processing or output failed.
	firstFailed atomic.Int64
}

func (b *partitionBatch) fail(offset int64) {
	for {
		cur := b.firstFailed.Load()
		if offset >= cur || b.firstFailed.CompareAndSwap(cur, offset) {
			return
		}
	}
}

// processFetches processes a poll's partitions concurrently (records of one
// partition in order), waits for every output to be acknowledged, then
// commits each partition up to its first failure and rewinds failed
// partitions so their records are fetched again.
func (w *Worker) processFetches(ctx context.Context, fetches kgo.Fetches) {
	var (
		batches []*partitionBatch
		work    sync.WaitGroup
		outputs sync.WaitGroup
		sem     = make(chan struct{}, w.cfg.Concurrency)
	)
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		b := &partitionBatch{topic: p.Topic, partition: p.Partition, last: p.Records[len(p.Records)-1]}
		b.firstFailed.Store(math.MaxInt64)
		batches = append(batches, b)
		sem <- struct{}{}
		work.Go(func() {
			defer func() { <-sem }()
			for _, rec := range p.Records {
				if ctx.Err() != nil {
					b.fail(rec.Offset)
					return
				}
				w.processRecord(ctx, p.HighWatermark, rec, b, &outputs)
			}
		})
	})
	work.Wait()
	outputs.Wait()
	w.commit(ctx, batches)
}

// processRecord runs the handler on rec inside its process span and produces
// its outputs (or its dead letter).
func (w *Worker) processRecord(ctx context.Context, highWatermark int64, rec *kgo.Record, b *partitionBatch, outputs *sync.WaitGroup) {
	pctx, span, qw := w.tracer.StartProcess(ctx, rec, highWatermark)
	msg := &Message{Record: rec, QueueWait: qw, Attempt: 1}
	outs, err := w.handler(pctx, msg)
	errType := ""
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down: leave the record uncommitted for redelivery
			// rather than dead-lettering work that was merely interrupted.
			w.tracer.EndProcess(pctx, rec, qw.End, span, err, "shutdown")
			b.fail(rec.Offset)
			return
		}
		errType = errorKind(err)
		attrs := []any{"partition", rec.Partition, "offset", rec.Offset, "error_type", errType, "attempts", msg.Attempt, "err", err}
		if pe := (*panicError)(nil); errors.As(err, &pe) {
			attrs = append(attrs, "stack", string(pe.stack))
		}
		w.logger.WarnContext(pctx, "dead-lettering record", attrs...)
		dl := deadLetter(rec, err, msg.Attempt, w.cfg.Group, w.cfg.MaxDeadLetterBytes)
		fallback := minimalDeadLetter(rec, err, msg.Attempt, w.cfg.Group)
		// The dead letter's send span is a child of this process span and
		// links the producer's span of the record that failed.
		if sc := trace.SpanContextFromContext(w.tracer.Extract(ctx, rec)); sc.IsValid() {
			dl.Context = kafkatrace.ContextWithLinks(pctx, trace.Link{SpanContext: sc})
			fallback.Context = dl.Context
		}
		// The outputs outlive a shutdown signal: they must still be
		// acknowledged before the input offset can be committed.
		w.produce(context.WithoutCancel(pctx), rec, dl, fallback, b, outputs)
		w.dead.Add(1)
		outs = nil
	}
	for _, out := range outs {
		if out.Context == nil {
			out.Context = pctx
		}
		w.produce(context.WithoutCancel(pctx), rec, out, nil, b, outputs)
	}
	w.tracer.EndProcess(pctx, rec, qw.End, span, err, errType)
	w.processed.Add(1)
}

// produce produces out, an output of in. If the broker (or the client's
// batch limit) refuses out as too large and fallback is not nil, fallback
// is produced instead. An output that is not acknowledged fails in, so it
// is not committed and is fetched again: nothing is dropped silently.
func (w *Worker) produce(ctx context.Context, in, out, fallback *kgo.Record, b *partitionBatch, outputs *sync.WaitGroup) {
	outputs.Add(1)
	w.client.Produce(ctx, out, func(r *kgo.Record, perr error) {
		defer outputs.Done()
		if perr == nil {
			return
		}
		if fallback != nil && tooLarge(perr) {
			w.logger.WarnContext(r.Context, "dead letter too large; sending it without the original value and headers",
				"output_topic", r.Topic, "partition", in.Partition, "offset", in.Offset, "err", perr)
			// Producing inside a promise may block on a full buffer, which
			// only this promise goroutine drains: produce from another one.
			outputs.Add(1)
			go func() {
				defer outputs.Done()
				w.produce(ctx, in, fallback, nil, b, outputs)
			}()
			return
		}
		w.logger.ErrorContext(r.Context, "output not acknowledged; input will be redelivered",
			"output_topic", r.Topic, "partition", in.Partition, "offset", in.Offset, "err", perr)
		b.fail(in.Offset)
	})
}

// tooLarge reports whether a produce error says the record is too large.
func tooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// commit commits every partition up to its first failed record and rewinds
// partitions that failed so the failed record is fetched again.
func (w *Worker) commit(ctx context.Context, batches []*partitionBatch) {
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	rewind := make(map[string]map[int32]kgo.EpochOffset)
	for _, b := range batches {
		next := b.last.Offset + 1
		if f := b.firstFailed.Load(); f != math.MaxInt64 {
			next = f
			if ctx.Err() == nil {
				setOffset(rewind, b.topic, b.partition, kgo.EpochOffset{Epoch: -1, Offset: f})
			}
		}
		setOffset(offsets, b.topic, b.partition, kgo.EpochOffset{Epoch: b.last.LeaderEpoch, Offset: next})
	}
	if len(offsets) == 0 {
		return
	}
	w.mu.Lock()
	for topic, ps := range offsets {
		for p := range ps {
			delete(w.uncommitted[topic], p) // superseded by this commit
		}
	}
	w.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.CommitTimeout)
	defer cancel()
	w.commitSync(cctx, w.client, offsets)
	w.retryUncommitted(cctx, w.client, nil)
	if len(rewind) > 0 {
		w.client.SetOffsets(rewind)
	}
}

// commitSync commits offsets and remembers those whose commit failed, so a
// later commit (the next batch, a revoke, shutdown) can retry them.
func (w *Worker) commitSync(ctx context.Context, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset) {
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			w.logger.ErrorContext(ctx, "commit failed; will retry on the next commit", "err", err)
			for topic, ps := range offsets {
				for p, eo := range ps {
					setOffset(w.uncommitted, topic, p, eo)
				}
			}
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				eo, ok := offsets[t.Topic][p.Partition]
				switch {
				case !ok:
				case p.ErrorCode != 0:
					w.logger.ErrorContext(ctx, "commit failed for partition; will retry on the next commit",
						"topic", t.Topic, "partition", p.Partition, "error_code", p.ErrorCode)
					setOffset(w.uncommitted, t.Topic, p.Partition, eo)
				default:
					if u, ok := w.uncommitted[t.Topic][p.Partition]; ok && u.Offset <= eo.Offset {
						delete(w.uncommitted[t.Topic], p.Partition)
					}
				}
			}
		}
	})
}

// retryUncommitted commits the remembered failed offsets of the given
// partitions (all when parts is nil).
func (w *Worker) retryUncommitted(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
	w.mu.Lock()
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	for topic, ps := range w.uncommitted {
		for p, eo := range ps {
			if parts == nil || slices.Contains(parts[topic], p) {
				setOffset(offsets, topic, p, eo)
			}
		}
	}
	w.mu.Unlock()
	if len(offsets) > 0 {
		w.commitSync(ctx, cl, offsets)
	}
}

// onRevoked commits what is owed for partitions leaving this member. With
// BlockRebalanceOnPoll a revoke only happens between batches, after their
// commit, so only offsets whose commit failed can be owed.
func (w *Worker) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	w.retryUncommitted(ctx, cl, revoked)
	w.mu.Lock()
	for topic, ps := range revoked {
		for _, p := range ps {
			delete(w.uncommitted[topic], p)
		}
	}
	w.mu.Unlock()
}

func setOffset(m map[string]map[int32]kgo.EpochOffset, topic string, partition int32, eo kgo.EpochOffset) {
	if m[topic] == nil {
		m[topic] = make(map[int32]kgo.EpochOffset)
	}
	m[topic][partition] = eo
}
