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

	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
)

// Config configures a Worker.
type Config struct {
	// Group is the consumer group. Required.
	Group string
	// Topic is the input topic. Required.
	Topic string
	// Concurrency is how many records (each of a different partition) are
	// processed at once; records of one partition are always processed in
	// order, one at a time, and partitions take turns. Default: 6.
	Concurrency int
	// MaxPollRecords caps the records taken from one poll and the records
	// queued for one partition: a partition whose queue is full is not
	// fetched until half of it is processed. Offsets are committed every
	// 100 ms, or as soon as half of MaxPollRecords records were
	// acknowledged. Default: 500.
	MaxPollRecords int
	// Attempts is how many times a transient handler error is tried in all
	// before the record is dead-lettered. Default: 3.
	Attempts int
	// RetryBackoff is the first retry's delay; it doubles up to 2 s. Default: 100 ms.
	RetryBackoff time.Duration
	// CommitTimeout bounds each of the two steps of a stop: finishing
	// the batch (the records polled, in flight and queued, and their
	// outputs' acknowledgements), then committing and leaving the group.
	// It also bounds every periodic commit. Default: 10 s.
	CommitTimeout time.Duration
	// SessionTimeout is how long the group waits for a member that stopped
	// heart-beating (a crashed worker) before giving its partitions to
	// others. It must lie within the broker's group.min.session.timeout.ms
	// and group.max.session.timeout.ms (Kafka: 6 s to 30 min). Default:
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// RebalanceTimeout is how long a rebalance waits for every member to
	// rejoin and sync; a member that does not (one killed mid-rebalance)
	// is removed only then, so it bounds the stall that crashes during a
	// rebalance add. A member must finish its revoked partitions (their
	// records in flight, outputs and commit) within it, or it is dropped
	// and its partitions are redelivered. The group uses its members'
	// largest value. Default: DefaultRebalanceTimeout.
	RebalanceTimeout time.Duration
	// HeartbeatInterval is how often the member heart-beats, which is also
	// how soon it learns that a rebalance began. It must be less than
	// SessionTimeout, and at most a third of it is advised (two lost
	// heartbeats are then not a lost session). Default:
	// DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// InstanceID, when set, makes the worker a static member (KIP-345)
	// under this id, which must be unique in the group and stable across
	// restarts (a pod's name): a worker restarted with it takes over its
	// predecessor's place and partitions at once, without waiting for the
	// dead member's session or a rebalance of the others. A static member
	// does not leave the group when it stops: its partitions wait for its
	// restart or SessionTimeout. Default: "" (a dynamic member).
	InstanceID string
	// FetchMaxBytes caps one fetch response. franz-go buffers at most one
	// fetch per broker until it is polled, so the records held by a worker
	// are bounded by brokers × FetchMaxBytes plus, per partition, its
	// queue (MaxPollRecords, and one more poll's worth before fetching it
	// pauses). Default: 16 MiB.
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

// The group defaults (see Config), for a latency-sensitive pipeline: a
// crashed worker that is restarted at once stalls its partitions for
// about DefaultRebalanceTimeout, and crashes spread over T at most T +
// rebalance + session timeout + heartbeat interval (measured on the
// development broker: docs/operations.md). The rebalance timeout is above
// the slowest record a revoke waits for (three 1 s searches and their
// backoff, 3.3 s) plus one heartbeat, and below the session timeout: a
// rebalance that outlasts a member's session drops that member too on the
// development broker. The session timeout is Kafka's former default and
// above the 6 s minimum brokers allow by default.
const (
	DefaultSessionTimeout    = 10 * time.Second
	DefaultRebalanceTimeout  = 5 * time.Second
	DefaultHeartbeatInterval = time.Second
)

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
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.RebalanceTimeout == 0 {
		c.RebalanceTimeout = DefaultRebalanceTimeout
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
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
	if c.Concurrency < 0 || c.MaxPollRecords < 0 || c.Attempts < 0 || c.RetryBackoff < 0 || c.CommitTimeout < 0 || c.FetchMaxBytes < 0 {
		errs = append(errs, errors.New("concurrency, max poll records, attempts, retry backoff, commit timeout and fetch max bytes must not be negative"))
	}
	if c.MaxRecordBytes < 0 || c.MaxHeaders < 0 || c.MaxHeaderBytes < 0 || c.MaxDeadLetterBytes < 0 {
		errs = append(errs, errors.New("max record bytes, max headers, max header bytes and max dead letter bytes must not be negative"))
	}
	if c.SessionTimeout < 0 || c.RebalanceTimeout < 0 || c.HeartbeatInterval < 0 {
		errs = append(errs, errors.New("session timeout, rebalance timeout and heartbeat interval must not be negative"))
	}
	if d := c.withDefaults(); d.HeartbeatInterval >= d.SessionTimeout {
		errs = append(errs, fmt.Errorf("heartbeat interval %v: must be less than the session timeout %v (a third of it at most is advised)", d.HeartbeatInterval, d.SessionTimeout))
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

// WithLogger sets the logger; nil is ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return optionFunc(func(w *Worker) { w.logger = l }) }

// WithMiddleware adds middleware inside the default Trace, DeadLetter,
// Recover, Limit and Retry. Default: none.
func WithMiddleware(mws ...Middleware) Option {
	return optionFunc(func(w *Worker) { w.middleware = append(w.middleware, mws...) })
}

// Worker consumes one topic as a member of one consumer group.
type Worker struct {
	cfg        Config
	client     *kgo.Client
	handler    Handler // the handler inside Trace and the other middleware
	logger     *slog.Logger
	middleware []Middleware

	processed atomic.Int64
	dead      atomic.Int64

	sem chan struct{} // a slot per record being processed (Concurrency)

	// draining is closed when Run stops: each partition then processes
	// what is queued and returns.
	draining chan struct{}

	partMu sync.Mutex
	parts  map[partKey]*partition // assigned partitions that have had records

	rmu      sync.Mutex
	rewinds  map[partKey]int64 // rewinds asked for, applied by the poll loop
	wakePoll context.CancelFunc

	commitMu   sync.Mutex    // serializes commits
	commitSoon chan struct{} // asks commitLoop for a commit now
	acked      atomic.Int64  // records acknowledged since the last commit

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
	w := &Worker{
		cfg:   cfg.withDefaults(),
		parts: make(map[partKey]*partition), rewinds: make(map[partKey]int64),
		commitSoon: make(chan struct{}, 1), uncommitted: make(map[string]map[int32]kgo.EpochOffset),
		draining: make(chan struct{}),
	}
	w.sem = make(chan struct{}, w.cfg.Concurrency)
	for _, o := range opts {
		o.apply(w)
	}
	w.logger = global.Logger(w.logger)
	limits := Limits{MaxRecordBytes: w.cfg.MaxRecordBytes, MaxHeaders: w.cfg.MaxHeaders, MaxHeaderBytes: w.cfg.MaxHeaderBytes}
	w.handler = Chain(handler, append([]Middleware{
		Trace(tracer, w.errorType),
		w.publishOutputs,
		DeadLetter(w.publishDeadLetter, w.cfg.Group, w.cfg.MaxDeadLetterBytes, shouldDeadLetter),
		Recover(), Limit(limits), Retry(w.cfg.Attempts, w.cfg.RetryBackoff, 2*time.Second),
	}, w.middleware...)...)
	w.logger = w.logger.With("group", cfg.Group, "topic", cfg.Topic)

	all := append([]kgo.Opt{}, clientOpts...)
	all = append(all,
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.SessionTimeout(w.cfg.SessionTimeout),
		kgo.RebalanceTimeout(w.cfg.RebalanceTimeout),
		kgo.HeartbeatInterval(w.cfg.HeartbeatInterval),
		kgo.DisableAutoCommit(),
		// Rebalances wait only while a poll's records are handed to their
		// partitions' queues (until AllowRebalance), so a record is never
		// queued for a partition already given away and rewinds never race
		// a revoke. Revoked partitions are stopped, drained and committed
		// in onRevoked, which franz-go runs before giving them away.
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(w.onRevoked),
		kgo.OnPartitionsLost(w.onLost),
		kgo.WithHooks(tracer),
		// Bounded memory: fetch responses and partition queues are capped,
		// and the producer buffer blocks rather than grows.
		kgo.FetchMaxBytes(w.cfg.FetchMaxBytes),
		kgo.FetchMaxPartitionBytes(min(w.cfg.FetchMaxBytes, 4<<20)),
		// A fetch in flight long-polls only for the partitions it names, so
		// a partition resumed after its queue filled is fetched again when
		// that fetch returns: with idle partitions, after FetchMaxWait
		// (franz-go's default, 5 s, stalls such a partition that long).
		// 100 ms is hidden by the half queue still to process; idle, it
		// costs ten empty fetches a second per broker.
		kgo.FetchMaxWait(fetchMaxWait),
		kgo.MaxBufferedRecords(2*w.cfg.MaxPollRecords),
	)
	if w.cfg.InstanceID != "" {
		all = append(all, kgo.InstanceID(w.cfg.InstanceID))
	}
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

// commitInterval is how often acknowledged offsets are committed; a
// commit also starts as soon as half of MaxPollRecords records were
// acknowledged since the last one.
const commitInterval = 100 * time.Millisecond

// fetchMaxWait bounds how long the broker holds a fetch without records.
const fetchMaxWait = 100 * time.Millisecond

// Run consumes until ctx is done, then stops gracefully in two steps,
// each bounded by CommitTimeout:
//
//  1. It finishes the batch: it stops fetching, processes the records of
//     the last poll and every record already queued (handlers do not see
//     ctx's cancellation), and waits until their outputs are
//     acknowledged. Handlers still running at the bound see their context
//     cancelled; a record not finished by then is not committed and is
//     redelivered.
//  2. It commits what was acknowledged (and the offsets whose commit failed
//     earlier), then leaves the group and closes the client.
//
// Each assigned partition has its own goroutine and bounded queue, fed by
// the poll loop: records of a partition are processed in order, partitions
// in parallel (at most Concurrency records at once, taken in turn), so a
// slow partition delays only itself. A partition whose queue holds
// MaxPollRecords records is paused until it has drained half of them, so
// the next polls bring the other partitions' records: under a backlog all
// partitions drain together.
func (w *Worker) Run(ctx context.Context) error {
	// The partitions and their handlers outlive ctx: the stop finishes the
	// batch with them. abandon cancels them when it takes too long.
	wctx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	stopCommits, committer := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(committer)
		w.commitLoop(wctx, stopCommits)
	}()
	defer func() {
		w.stop(ctx, wctx, abandon, stopCommits, committer)
	}()
	w.logger.InfoContext(ctx, "worker started")
	for {
		pctx, cancel := w.pollContext(ctx)
		fetches := w.client.PollRecords(pctx, w.cfg.MaxPollRecords)
		cancel()
		if fetches.IsClientClosed() {
			return nil
		}
		stopping := ctx.Err() != nil
		fetches.EachError(func(topic string, partition int32, err error) { w.logFetchError(ctx, topic, partition, err) })
		// Rebalances are blocked from the poll until AllowRebalance, so
		// every record handed out belongs to a partition this member owns,
		// and a rewind (SetOffsets) never races a revoke. Records polled
		// at the moment of shutdown are part of the batch the stop
		// finishes: the block holds until the stop has committed them.
		w.dispatch(wctx, fetches)
		if stopping {
			break
		}
		w.client.AllowRebalance()
	}
	return nil
}

// stop is Run's graceful stop (see Run), once the poll loop has ended with
// rebalances blocked, so no revoke runs concurrently.
func (w *Worker) stop(ctx, wctx context.Context, abandon context.CancelFunc, stopCommits, committer chan struct{}) {
	start := time.Now()
	w.logger.InfoContext(ctx, "worker stopping: finishing the batch", "processed", w.processed.Load(), "dead_lettered", w.dead.Load())
	// Step 1: the partitions process what they have queued, the periodic
	// commits stop (one in flight completes) and the outputs are
	// acknowledged; past CommitTimeout, all of it is abandoned.
	close(w.draining)
	close(stopCommits)
	deadline := time.AfterFunc(w.cfg.CommitTimeout, abandon)
	parts := w.detach(nil, true)
	finished := w.finish(wctx, parts)
	<-committer
	if !deadline.Stop() || !finished {
		w.logger.WarnContext(ctx, "worker stopping: the batch did not finish within the commit timeout; its unfinished records will be redelivered",
			"commit_timeout", w.cfg.CommitTimeout)
	}
	abandon()
	// Step 2: commit the acknowledged offsets and those owed, then leave.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.CommitTimeout)
	defer cancel()
	w.commit(fctx, w.client, parts)
	w.giveUpUncommitted(ctx)
	// Leaving the group waits for the poll's rebalance block to be
	// released. Left here, within the bound, Close does not leave again.
	w.client.AllowRebalance()
	if err := w.client.LeaveGroupContext(fctx); err != nil {
		w.logger.WarnContext(ctx, "leaving the group failed; the group reassigns the partitions after the session timeout", "err", err)
	}
	w.client.Close()
	w.logger.InfoContext(ctx, "worker stopped", "processed", w.processed.Load(), "dead_lettered", w.dead.Load(),
		"took", time.Since(start).Round(time.Millisecond))
}

// finish waits until parts have processed their queues and their outputs
// are acknowledged, or until wctx is done, and reports whether they did.
func (w *Worker) finish(wctx context.Context, parts []*partition) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range parts {
			select {
			case <-p.done:
			case <-wctx.Done():
				return
			}
		}
		// No partition starts a record any more: the outputs counted are
		// all there will be (a fallback dead letter is counted before the
		// first one is acknowledged).
		for _, p := range parts {
			p.outputs.Wait()
		}
	}()
	select {
	case <-done:
		return wctx.Err() == nil
	case <-wctx.Done():
		return false
	}
}

// giveUpUncommitted forgets the offsets whose last commit failed at
// shutdown, saying so: their records are redelivered.
func (w *Worker) giveUpUncommitted(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for topic, ps := range w.uncommitted {
		if len(ps) > 0 {
			w.logger.WarnContext(ctx, "worker stopping: offsets not committed; their records will be redelivered", "commit_topic", topic, "partitions", len(ps))
		}
	}
	clear(w.uncommitted)
}

// logFetchError logs a fetch error at warn, unless it is a poll woken for
// a rewind. The worker's logger carries its topic already (one key a line):
// a different one, such as "" for an error of the whole client, is
// fetch_topic.
func (w *Worker) logFetchError(ctx context.Context, topic string, partition int32, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	args := []any{"partition", partition, "err", err}
	if topic != w.cfg.Topic {
		args = append([]any{"fetch_topic", topic}, args...)
	}
	w.logger.WarnContext(ctx, "fetch error", args...)
}

// pollContext returns the context of the next poll: it is cancelled when a
// partition asks for a rewind, so the rewind does not wait for new records.
func (w *Worker) pollContext(ctx context.Context) (context.Context, context.CancelFunc) {
	pctx, cancel := context.WithCancel(ctx)
	w.rmu.Lock()
	w.wakePoll = cancel
	if len(w.rewinds) > 0 {
		cancel()
	}
	w.rmu.Unlock()
	return pctx, cancel
}

// dispatch applies the rewinds asked for, then queues the poll's records on
// their partitions, starting a partition's goroutine when it has none.
func (w *Worker) dispatch(ctx context.Context, fetches kgo.Fetches) {
	rewound := w.applyRewinds()
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if len(fp.Records) == 0 {
			return
		}
		k := partKey{fp.Topic, fp.Partition}
		if _, ok := rewound[k]; ok {
			return // fetched before the rewind
		}
		w.partMu.Lock()
		p := w.parts[k]
		if p == nil {
			p = w.newPartition(k)
			w.parts[k] = p
			go p.run(ctx)
		}
		w.partMu.Unlock()
		p.enqueue(fp.Records, fp.HighWatermark)
	})
}

// applyRewinds rewinds the partitions that asked for it (between a poll and
// AllowRebalance, as SetOffsets asks) and returns them.
func (w *Worker) applyRewinds() map[partKey]int64 {
	w.rmu.Lock()
	rewinds := w.rewinds
	if len(rewinds) > 0 {
		w.rewinds = make(map[partKey]int64)
	}
	w.rmu.Unlock()
	if len(rewinds) == 0 {
		return nil
	}
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	for k, offset := range rewinds {
		setOffset(offsets, k.topic, k.partition, kgo.EpochOffset{Epoch: -1, Offset: offset})
	}
	w.client.SetOffsets(offsets)
	w.partMu.Lock()
	defer w.partMu.Unlock()
	for k := range rewinds {
		if p := w.parts[k]; p != nil {
			p.rewound()
		}
	}
	return rewinds
}

// requestRewind asks the poll loop to fetch p again from offset.
func (w *Worker) requestRewind(p *partition, offset int64) {
	w.rmu.Lock()
	defer w.rmu.Unlock()
	w.rewinds[p.key] = offset
	if w.wakePoll != nil {
		w.wakePoll()
	}
}

// detach removes the given partitions (all with all) from the worker and
// returns their state.
func (w *Worker) detach(parts map[string][]int32, all bool) []*partition {
	w.partMu.Lock()
	var out []*partition
	for k, p := range w.parts {
		if all || slices.Contains(parts[k.topic], k.partition) {
			out = append(out, p)
			delete(w.parts, k)
		}
	}
	w.partMu.Unlock()
	w.rmu.Lock()
	for _, p := range out {
		delete(w.rewinds, p.key)
	}
	w.rmu.Unlock()
	return out
}

// release stops the goroutines of parts after the record each has in
// flight and resumes their fetching (a revoke; a lost partition). With
// commit, it waits for their outputs and commits what was acknowledged.
func (w *Worker) release(ctx context.Context, cl *kgo.Client, parts []*partition, commit bool) {
	for _, p := range parts {
		close(p.quit)
	}
	for _, p := range parts {
		<-p.done
		p.mu.Lock()
		p.resume()
		p.mu.Unlock()
	}
	if !commit {
		return
	}
	for _, p := range parts {
		p.outputs.Wait()
	}
	w.commit(ctx, cl, parts)
}

// commitLoop commits acknowledged offsets every commitInterval, or sooner
// when many records were acknowledged, until stop is closed; a commit in
// flight then completes. ctx cancels commits.
func (w *Worker) commitLoop(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(commitInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-w.commitSoon:
		}
		w.partMu.Lock()
		parts := make([]*partition, 0, len(w.parts))
		for _, p := range w.parts {
			parts = append(parts, p)
		}
		w.partMu.Unlock()
		cctx, cancel := context.WithTimeout(ctx, w.cfg.CommitTimeout)
		w.commit(cctx, w.client, parts)
		cancel()
	}
}

// acknowledged counts n records acknowledged and asks for a commit when
// half of MaxPollRecords are waiting for one.
func (w *Worker) acknowledged(n int64) {
	if w.acked.Add(n) >= int64(w.cfg.MaxPollRecords/2) {
		select {
		case w.commitSoon <- struct{}{}:
		default:
		}
	}
}

// partKey names a partition.
type partKey struct {
	topic     string
	partition int32
}

// queued is a record waiting in its partition's queue.
type queued struct {
	rec           *kgo.Record
	highWatermark int64
}

// pending is a processed record whose outputs are not all acknowledged.
type pending struct {
	p      *partition
	offset int64
	epoch  int32
	left   int // outputs not yet acknowledged, plus one while processing
	failed bool
}

// partition is the state and goroutine of one assigned partition.
type partition struct {
	w       *Worker
	key     partKey
	wake    chan struct{} // records queued, or a failure to handle
	quit    chan struct{} // closed to stop after the record in flight
	done    chan struct{} // closed when the goroutine returned
	outputs sync.WaitGroup

	mu          sync.Mutex
	queue       []queued
	paused      bool // fetching paused while the queue is full
	rewinding   bool // a rewind was asked for; dispatched records are dropped
	inflight    []*pending
	firstFailed int64           // lowest offset whose processing or output failed
	next        kgo.EpochOffset // every record before next.Offset is done
	committed   int64           // next.Offset as last committed
}

func (w *Worker) newPartition(k partKey) *partition {
	return &partition{
		w: w, key: k,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		firstFailed: math.MaxInt64, next: kgo.EpochOffset{Epoch: -1, Offset: -1}, committed: -1,
	}
}

func (p *partition) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// enqueue queues recs, pausing the partition's fetching when the queue is full.
func (p *partition) enqueue(recs []*kgo.Record, highWatermark int64) {
	p.mu.Lock()
	if p.rewinding {
		p.mu.Unlock()
		return
	}
	for _, r := range recs {
		p.queue = append(p.queue, queued{r, highWatermark})
	}
	if !p.paused && len(p.queue) >= p.w.cfg.MaxPollRecords {
		p.paused = true
		p.w.client.PauseFetchPartitions(map[string][]int32{p.key.topic: {p.key.partition}})
	}
	p.mu.Unlock()
	p.signal()
}

// resume resumes fetching if it was paused. p.mu must be held.
func (p *partition) resume() {
	if p.paused {
		p.paused = false
		p.w.client.ResumeFetchPartitions(map[string][]int32{p.key.topic: {p.key.partition}})
	}
}

// take returns the next record to process; none while a failure waits to
// be handled.
func (p *partition) take() (q queued, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rewinding || p.firstFailed != math.MaxInt64 || len(p.queue) == 0 {
		return q, false
	}
	q = p.queue[0]
	p.queue[0] = queued{}
	p.queue = p.queue[1:]
	if len(p.queue) <= p.w.cfg.MaxPollRecords/2 {
		p.resume()
	}
	return q, true
}

// run processes the partition's records in order until quit or ctx is
// done, or, once the worker is draining, until its queue is empty.
func (p *partition) run(ctx context.Context) {
	defer close(p.done)
	for {
		select {
		case <-p.quit:
			return
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-p.w.draining:
		}
		for {
			if ctx.Err() != nil || p.stopped() {
				return
			}
			p.mu.Lock()
			failed := p.firstFailed != math.MaxInt64 && !p.rewinding
			p.mu.Unlock()
			if failed && p.draining() {
				// The poll loop rewinds no more: the failed record and
				// those after it stay uncommitted, for redelivery.
				return
			}
			if failed {
				p.rewind(ctx)
				break
			}
			q, ok := p.take()
			if !ok && p.draining() {
				return
			}
			if !ok {
				break
			}
			select {
			case p.w.sem <- struct{}{}:
			case <-p.quit:
				return
			case <-ctx.Done():
				return
			}
			p.w.processRecord(ctx, p, q.highWatermark, q.rec)
			<-p.w.sem
		}
	}
}

// draining reports whether the worker is stopping (Run's step 1).
func (p *partition) draining() bool {
	select {
	case <-p.w.draining:
		return true
	default:
		return false
	}
}

func (p *partition) stopped() bool {
	select {
	case <-p.quit:
		return true
	default:
		return false
	}
}

// rewind drops the queue, waits for the outputs in flight, and asks the
// poll loop to fetch the partition again from its first failed record.
func (p *partition) rewind(ctx context.Context) {
	p.mu.Lock()
	p.rewinding = true
	clear(p.queue)
	p.queue = p.queue[:0]
	p.resume()
	p.mu.Unlock()
	p.outputs.Wait()
	p.mu.Lock()
	offset := p.firstFailed
	p.mu.Unlock()
	p.w.logger.WarnContext(ctx, "rewinding partition to its first failed record", "partition", p.key.partition, "offset", offset)
	p.w.requestRewind(p, offset)
}

// rewound is called by the poll loop once the partition was rewound: what
// is dispatched from now on was fetched from the failed record.
func (p *partition) rewound() {
	p.mu.Lock()
	p.firstFailed = math.MaxInt64
	clear(p.inflight)
	p.inflight = p.inflight[:0]
	clear(p.queue)
	p.queue = p.queue[:0]
	p.rewinding = false
	p.mu.Unlock()
	p.signal()
}

// begin tracks rec as in progress.
func (p *partition) begin(rec *kgo.Record) *pending {
	pd := &pending{p: p, offset: rec.Offset, epoch: rec.LeaderEpoch, left: 1}
	p.outputs.Add(1)
	p.mu.Lock()
	p.inflight = append(p.inflight, pd)
	p.mu.Unlock()
	return pd
}

// add counts one more output of pd.
func (p *partition) add(pd *pending) {
	p.outputs.Add(1)
	p.mu.Lock()
	pd.left++
	p.mu.Unlock()
}

// ack counts one output of pd (or its processing) as done, failed or not,
// and moves the committable offset past the records whose outputs are all
// acknowledged.
func (p *partition) ack(pd *pending, failed bool) {
	var advanced int64
	p.mu.Lock()
	if failed {
		pd.failed = true
		p.firstFailed = min(p.firstFailed, pd.offset)
	}
	pd.left--
	for len(p.inflight) > 0 {
		h := p.inflight[0]
		if h.left > 0 || h.failed {
			break
		}
		p.next = kgo.EpochOffset{Epoch: h.epoch, Offset: h.offset + 1}
		p.inflight[0] = nil
		p.inflight = p.inflight[1:]
		advanced++
	}
	p.mu.Unlock()
	p.outputs.Done()
	if failed {
		p.signal()
	}
	if advanced > 0 {
		p.w.acknowledged(advanced)
	}
}

// processRecord runs the handler chain on rec: Trace, the publishing of
// the outputs, DeadLetter, Recover, Limit, Retry and the handler. A record
// that failed without being dead-lettered (the worker is shutting down) is
// left uncommitted, for redelivery.
func (w *Worker) processRecord(ctx context.Context, p *partition, highWatermark int64, rec *kgo.Record) {
	pd := p.begin(rec)
	msg := &Message{Record: rec, HighWatermark: highWatermark, Attempt: 1, pd: pd}
	if _, err := w.handler(ctx, msg); err != nil && !msg.DeadLettered {
		p.ack(pd, true)
		return
	}
	w.processed.Add(1)
	p.ack(pd, false)
}

// shouldDeadLetter is the Worker's DeadLetter filter: when a stop ran out
// of time and cancelled the handlers, it leaves the record uncommitted for
// redelivery rather than dead-lettering work that was merely interrupted.
func shouldDeadLetter(ctx context.Context, _ error) bool { return ctx.Err() == nil }

// errorType is the error.type of a failed record's process span: "shutdown"
// when it was not dead-lettered, else "permanent" or "transient".
func (w *Worker) errorType(msg *Message, err error) string {
	if !msg.DeadLettered {
		return "shutdown"
	}
	return errorKind(err)
}

// publishOutputs is the Worker's middleware right inside Trace: it produces
// the handler's outputs as children of the process span (unless they carry
// a context of their own) and returns none.
func (w *Worker) publishOutputs(next Handler) Handler {
	return func(ctx context.Context, msg *Message) ([]*kgo.Record, error) {
		outs, err := next(ctx, msg)
		if err != nil {
			return nil, err
		}
		corr := kafkatrace.HeaderCarrier{Record: msg.Record}.Get(messages.HeaderCorrelation)
		for _, out := range outs {
			if out.Context == nil {
				out.Context = ctx
			}
			carryCorrelation(out, corr)
			// The outputs outlive a shutdown signal: they must still be
			// acknowledged before the input offset can be committed, so
			// neither the produce call nor the records (whose Context
			// franz-go watches while they are buffered) are cancelled with
			// ctx. The contexts keep their values: the span and the pathway.
			out.Context = context.WithoutCancel(out.Context)
			w.produce(context.WithoutCancel(ctx), msg.Record, out, nil, msg.pd)
		}
		return nil, nil
	}
}

// carryCorrelation gives out its input's messages.HeaderCorrelation value
// corr, unless out sets one itself or the input had none.
func carryCorrelation(out *kgo.Record, corr string) {
	if corr == "" {
		return
	}
	c := kafkatrace.HeaderCarrier{Record: out}
	if c.Get(messages.HeaderCorrelation) == "" {
		c.Set(messages.HeaderCorrelation, corr)
	}
}

// publishDeadLetter is the Worker's DeadLetterPublisher: it logs the
// failure and produces the dead letter, or its fallback when the broker
// refuses it as too large.
func (w *Worker) publishDeadLetter(ctx context.Context, msg *Message, err error, dl, fallback *kgo.Record) {
	rec := msg.Record
	attrs := []any{"partition", rec.Partition, "offset", rec.Offset, "error_type", errorKind(err), "attempts", msg.Attempt, "err", err}
	if pe := (*panicError)(nil); errors.As(err, &pe) {
		attrs = append(attrs, "stack", string(pe.stack))
	}
	w.logger.WarnContext(ctx, "dead-lettering record", attrs...)
	w.produce(context.WithoutCancel(ctx), rec, dl, fallback, msg.pd)
	w.dead.Add(1)
}

// produce produces out, an output of in. If the broker (or the client's
// batch limit) refuses out as too large and fallback is not nil, fallback
// is produced instead. An output that is not acknowledged fails in, so it
// is not committed and is fetched again: nothing is dropped silently.
func (w *Worker) produce(ctx context.Context, in, out, fallback *kgo.Record, pd *pending) {
	p := pd.p
	p.add(pd)
	w.client.Produce(ctx, out, func(r *kgo.Record, perr error) {
		if perr == nil {
			p.ack(pd, false)
			return
		}
		if fallback != nil && tooLarge(perr) {
			w.logger.WarnContext(r.Context, "dead letter too large; sending it without the original value and headers",
				"output_topic", r.Topic, "partition", in.Partition, "offset", in.Offset, "err", perr)
			// Producing inside a promise may block on a full buffer, which
			// only this promise goroutine drains: produce from another one.
			go func() {
				w.produce(ctx, in, fallback, nil, pd)
				p.ack(pd, false)
			}()
			return
		}
		w.logger.ErrorContext(r.Context, "output not acknowledged; input will be redelivered",
			"output_topic", r.Topic, "partition", in.Partition, "offset", in.Offset, "err", perr)
		p.ack(pd, true)
	})
}

// tooLarge reports whether a produce error says the record is too large.
func tooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// commit commits the acknowledged offsets of parts that moved since their
// last commit, and retries offsets whose commit failed. Commits are
// serialized, so a later commit of a partition never carries an older
// offset than an earlier one.
func (w *Worker) commit(ctx context.Context, cl *kgo.Client, parts []*partition) {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.acked.Store(0)
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	for _, p := range parts {
		p.mu.Lock()
		if p.next.Offset > p.committed {
			setOffset(offsets, p.key.topic, p.key.partition, p.next)
			p.committed = p.next.Offset
		}
		p.mu.Unlock()
	}
	if len(offsets) > 0 {
		w.mu.Lock()
		for topic, ps := range offsets {
			for p := range ps {
				delete(w.uncommitted[topic], p) // superseded by this commit
			}
		}
		w.mu.Unlock()
		w.commitSync(ctx, cl, offsets)
	}
	w.retryUncommitted(ctx, cl, nil)
}

// commitSync commits offsets and remembers those whose commit failed, so a
// later commit (the next one, a revoke, shutdown) can retry them.
func (w *Worker) commitSync(ctx context.Context, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset) {
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			// A commit waits while the group rebalances (a member joining
			// or leaving) and may run out of time then: expected, and
			// retried, so a warning; anything else is an error.
			level := slog.LevelError
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kerr.RebalanceInProgress) {
				level = slog.LevelWarn
			}
			w.logger.Log(ctx, level, "commit failed; will retry on the next commit", "err", err)
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
					// The worker's logger carries the topic, the only one it commits.
					w.logger.ErrorContext(ctx, "commit failed for partition; will retry on the next commit",
						"partition", p.Partition, "error_code", p.ErrorCode)
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

// onRevoked runs before franz-go gives partitions away: it stops their
// goroutines after the record each has in flight, waits for the outputs,
// and commits what is acknowledged and what is owed. A cooperative member
// is also called at the end of every session with nothing revoked: then it
// only retries owed commits.
func (w *Worker) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	cctx, cancel := context.WithTimeout(ctx, w.cfg.CommitTimeout)
	defer cancel()
	w.release(cctx, cl, w.detach(revoked, false), true)
	w.retryUncommitted(cctx, cl, revoked)
	w.forget(revoked)
}

// onLost stops the goroutines of lost partitions without committing: the
// group moved on without us, so commits would be rejected; the new owner
// redelivers.
func (w *Worker) onLost(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
	w.release(ctx, cl, w.detach(lost, false), false)
	w.forget(lost)
	w.logger.WarnContext(ctx, "partitions lost", "partitions", lost)
}

// forget drops the owed commits of partitions that left this member.
func (w *Worker) forget(parts map[string][]int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for topic, ps := range parts {
		for _, p := range ps {
			delete(w.uncommitted[topic], p)
		}
	}
}

func setOffset(m map[string]map[int32]kgo.EpochOffset, topic string, partition int32, eo kgo.EpochOffset) {
	if m[topic] == nil {
		m[topic] = make(map[int32]kgo.EpochOffset)
	}
	m[topic][partition] = eo
}
