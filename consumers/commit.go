// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitInterval is how often acknowledged offsets are committed; a
// commit also starts as soon as half of MaxPollRecords records were
// acknowledged since the last one.
const commitInterval = 100 * time.Millisecond

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
		w.owedMu.Lock()
		for topic, ps := range offsets {
			for p := range ps {
				delete(w.uncommitted[topic], p) // superseded by this commit
			}
		}
		w.owedMu.Unlock()
		w.commitSync(ctx, cl, offsets)
	}
	w.retryUncommitted(ctx, cl, nil)
}

// commitSync commits offsets and remembers those whose commit failed, so a
// later commit (the next one, a revoke, shutdown) can retry them.
func (w *Worker) commitSync(ctx context.Context, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset) {
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		w.owedMu.Lock()
		defer w.owedMu.Unlock()
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
	w.owedMu.Lock()
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	for topic, ps := range w.uncommitted {
		for p, eo := range ps {
			if parts == nil || slices.Contains(parts[topic], p) {
				setOffset(offsets, topic, p, eo)
			}
		}
	}
	w.owedMu.Unlock()
	if len(offsets) > 0 {
		w.commitSync(ctx, cl, offsets)
	}
}

// giveUpUncommitted forgets the offsets whose last commit failed at
// shutdown, saying so: their records are redelivered.
func (w *Worker) giveUpUncommitted(ctx context.Context) {
	w.owedMu.Lock()
	defer w.owedMu.Unlock()
	for topic, ps := range w.uncommitted {
		if len(ps) > 0 {
			w.logger.WarnContext(ctx, "worker stopping: offsets not committed; their records will be redelivered", "commit_topic", topic, "partitions", len(ps))
		}
	}
	clear(w.uncommitted)
}

// setOffset sets m[topic][partition] to eo.

func setOffset(m map[string]map[int32]kgo.EpochOffset, topic string, partition int32, eo kgo.EpochOffset) {
	if m[topic] == nil {
		m[topic] = make(map[int32]kgo.EpochOffset)
	}
	m[topic][partition] = eo
}
