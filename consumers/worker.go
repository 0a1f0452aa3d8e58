// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// Worker consumes one topic as a member of one consumer group. Its files
// follow a record: worker.go polls and dispatches, queue.go queues and
// processes a partition's records in order, outcome.go runs the chain
// (chain.go) and takes its outcome, publish.go publishes the outputs or the
// dead letter, commit.go commits, and rebalance.go hands partitions over.
type Worker struct {
	cfg     Config
	client  *kgo.Client
	tracer  *kafkatrace.Tracer
	handler Handler // the handler inside the chain
	logger  *slog.Logger

	chain      []Middleware // WithChain's, or DefaultMiddleware's
	chainSet   bool         // WithChain was given
	middleware []Middleware // WithMiddleware's, inside the chain

	processed atomic.Int64
	dead      atomic.Int64
	expired   atomic.Int64

	mp             metric.MeterProvider // WithMeterProvider's
	expiredCounter metric.Int64Counter
	expiredAttrs   metric.MeasurementOption

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

	owedMu      sync.Mutex
	uncommitted map[string]map[int32]kgo.EpochOffset // offsets whose commit failed, owed to the group
}

// New returns a Worker for cfg. clientOpts are the connection options
// (see kafkaclient.Options); New adds the group options and installs tracer
// as a hook so the outputs get send spans. tracer should be configured with
// the same consumer group. Each record runs through handler inside the
// chain of DefaultMiddleware(cfg), or of WithChain.
func New(cfg Config, tracer *kafkatrace.Tracer, handler Handler, clientOpts []kgo.Opt, opts ...Option) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	if tracer == nil || handler == nil {
		return nil, errors.New("worker: tracer and handler are required")
	}
	w := &Worker{
		cfg: cfg.withDefaults(), tracer: tracer,
		parts: make(map[partKey]*partition), rewinds: make(map[partKey]int64),
		commitSoon: make(chan struct{}, 1), uncommitted: make(map[string]map[int32]kgo.EpochOffset),
		draining: make(chan struct{}),
	}
	w.sem = make(chan struct{}, w.cfg.Concurrency)
	for _, o := range opts {
		o.apply(w)
	}
	if !w.chainSet {
		w.chain = DefaultMiddleware(w.cfg)
	}
	if err := w.newExpiredCounter(); err != nil {
		return nil, err
	}
	w.handler = Chain(handler, append(slices.Clip(w.chain), w.middleware...)...)
	w.logger = global.Logger(w.logger).With("group", cfg.Group, "topic", cfg.Topic)
	client, err := kgo.NewClient(w.clientOptions(clientOpts)...)
	if err != nil {
		return nil, fmt.Errorf("worker client: %w", err)
	}
	w.client = client
	return w, nil
}

// clientOptions returns clientOpts and the group, fetch and hook options
// of the worker's client.
func (w *Worker) clientOptions(clientOpts []kgo.Opt) []kgo.Opt {
	all := append([]kgo.Opt{}, clientOpts...)
	all = append(all,
		kgo.ConsumerGroup(w.cfg.Group),
		kgo.ConsumeTopics(w.cfg.Topic),
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
		kgo.OnPartitionsAssigned(w.onAssigned),
		kgo.OnPartitionsRevoked(w.onRevoked),
		kgo.OnPartitionsLost(w.onLost),
		kgo.WithHooks(w.tracer),
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
	return all
}

// Client returns the worker's Kafka client (for topic creation and admin).
func (w *Worker) Client() *kgo.Client { return w.client }

// Processed returns how many records the worker has finished (including
// dead-lettered and expired ones).
func (w *Worker) Processed() int64 { return w.processed.Load() }

// DeadLettered returns how many records the worker has sent to a dead-letter topic.
func (w *Worker) DeadLettered() int64 { return w.dead.Load() }

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
	// Decided under the lock: with nothing to rewind the map stays the
	// Worker's, which partitions write to.
	w.rmu.Lock()
	rewinds := w.rewinds
	if len(rewinds) == 0 {
		w.rmu.Unlock()
		return nil
	}
	w.rewinds = make(map[partKey]int64)
	w.rmu.Unlock()
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
