// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/internal/backoff"
)

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
	// rewinds counts the rewinds since an output was last acknowledged:
	// each waits twice as long as the one before (rewindBackoff).
	rewinds int
	// failedOutputs counts the outputs not acknowledged since the last
	// rewind, and firstErr is the first one's error: logged once, with
	// the rewind, not once per output.
	failedOutputs int
	firstErr      error
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
			p.w.processRecord(ctx, p, q)
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

// rewind drops the queue, waits for the outputs in flight, waits out its
// backoff, and asks the poll loop to fetch the partition again from its
// first failed record. A broker that refuses every output (a full disk)
// so sees each partition re-run no more often than the backoff allows,
// and the failures logged once per rewind, not once per record.
func (p *partition) rewind(ctx context.Context) {
	p.mu.Lock()
	p.rewinding = true
	clear(p.queue)
	p.queue = p.queue[:0]
	p.resume()
	p.mu.Unlock()
	p.outputs.Wait()
	p.mu.Lock()
	offset, failed, firstErr := p.firstFailed, p.failedOutputs, p.firstErr
	wait := rewindBackoff(p.w.cfg.RetryBackoff, p.rewinds)
	p.rewinds++
	p.failedOutputs, p.firstErr = 0, nil
	p.mu.Unlock()
	p.w.logger.WarnContext(ctx, "rewinding partition to its first failed record", "partition", p.key.partition, "offset", offset,
		"failed_outputs", failed, "first_error", firstErr, "backoff", wait)
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-p.quit:
	case <-p.w.draining:
	case <-ctx.Done():
	}
	t.Stop()
	p.w.requestRewind(p, offset)
}

// rewindBackoff is the wait before the rewind that follows n rewinds with
// no output acknowledged in between: first (the worker's RetryBackoff, as
// a transient error's retries wait) doubled n times, at most
// maxRewindBackoff, ±20% jitter (so that the partitions of a refusing
// broker do not all come back at once).
func rewindBackoff(first time.Duration, n int) time.Duration {
	return backoff.Proportional(backoff.Doubling(first, maxRewindBackoff, n), 0.2)
}

// maxRewindBackoff caps the wait between two rewinds of a partition.
const maxRewindBackoff = 5 * time.Second

// outputAcked notes that the broker took an output of the partition: the
// next rewind waits only the first backoff again.
func (p *partition) outputAcked() {
	p.mu.Lock()
	p.rewinds = 0
	p.mu.Unlock()
}

// outputFailed counts a failed output of the partition. The first failure
// after an acknowledged output is logged at once, at error (what an
// operator must see); the others are counted in the warning of each
// rewind, so that a broker refusing every output costs a line per rewind.
func (p *partition) outputFailed(ctx context.Context, out *kgo.Record, in *kgo.Record, err error) {
	p.mu.Lock()
	p.failedOutputs++
	if p.failedOutputs == 1 {
		p.firstErr = err
	}
	first := p.failedOutputs == 1 && p.rewinds == 0
	p.mu.Unlock()
	if first {
		p.w.logger.ErrorContext(ctx, "output not acknowledged; input will be redelivered",
			"output_topic", out.Topic, "partition", in.Partition, "offset", in.Offset, "err", err)
	}
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
