// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

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
// flight and resumes their fetching (a revoke; a lost partition).
func (w *Worker) release(parts []*partition) {
	for _, p := range parts {
		close(p.quit)
	}
	for _, p := range parts {
		<-p.done
		p.mu.Lock()
		p.resume()
		p.mu.Unlock()
	}
}

// awaitOutputs waits until the outputs of parts are acknowledged or until
// deadline, and reports how many records of parts still had outputs in
// flight then.
// Their offsets only move past acknowledged records, so what is committed
// after a timeout is still only what is done: the rest goes to the
// partitions' next owner again (a duplicate if the output lands later,
// never a loss).
func awaitOutputs(parts []*partition, deadline time.Time) (waiting int) {
	done := make(chan struct{})
	go func() {
		// Ends when the outputs are acknowledged or fail, at the latest
		// when the client closes.
		for _, p := range parts {
			p.outputs.Wait()
		}
		close(done)
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return 0
	case <-t.C:
	}
	for _, p := range parts {
		p.mu.Lock()
		waiting += len(p.inflight)
		p.mu.Unlock()
	}
	return waiting
}

// revokeBudget is how long a revoke may wait for the outputs of its
// partitions: the rebalance timeout less a heartbeat interval, kept for the
// commit and the rejoin. A member that rejoins later than the rebalance
// timeout is dropped from the group, which then rebalances again: the
// whole group's stall, not just this member's.
func (w *Worker) revokeBudget() time.Duration {
	return max(w.cfg.RebalanceTimeout-w.cfg.HeartbeatInterval, w.cfg.RebalanceTimeout/2)
}

// onAssigned logs the partitions a rebalance gave this member: with
// onRevoked's line, an operator reads a stall against the group's moves.
func (w *Worker) onAssigned(ctx context.Context, _ *kgo.Client, assigned map[string][]int32) {
	if len(assigned) > 0 {
		w.logger.InfoContext(ctx, "partitions assigned", "partitions", sortedPartitions(assigned))
	}
}

// onRevoked runs before franz-go gives partitions away: it stops their
// goroutines after the record each has in flight, waits for the outputs
// (for revokeBudget at most: a broker that is slow to acknowledge must not
// hold the whole group's rebalance), and commits what is acknowledged and
// what is owed. A cooperative member is also called at the end of every
// session with nothing revoked: then it only retries owed commits.
func (w *Worker) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	deadline := time.Now().Add(w.revokeBudget())
	if len(revoked) > 0 {
		w.logger.InfoContext(ctx, "partitions revoked", "partitions", sortedPartitions(revoked))
	}
	cctx, cancel := context.WithTimeout(ctx, w.cfg.CommitTimeout)
	defer cancel()
	parts := w.detach(revoked, false)
	w.release(parts)
	if n := awaitOutputs(parts, deadline); n > 0 {
		w.logger.WarnContext(ctx, "revoke: outputs not acknowledged within the rebalance budget; their inputs go to the next owner again",
			"records", n, "budget", w.revokeBudget())
	}
	w.commit(cctx, cl, parts)
	w.retryUncommitted(cctx, cl, revoked)
	w.forget(revoked)
}

// onLost stops the goroutines of lost partitions without committing: the
// group moved on without us, so commits would be rejected; the new owner
// redelivers.
func (w *Worker) onLost(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
	w.release(w.detach(lost, false))
	w.forget(lost)
	// franz-go also calls it with none when a session ends: no news.
	if parts := sortedPartitions(lost); len(parts) > 0 {
		w.logger.WarnContext(ctx, "partitions lost", "partitions", parts)
	}
}

// sortedPartitions lists the partitions of parts in order: a worker
// consumes one topic, which its logger already names.
func sortedPartitions(parts map[string][]int32) []int32 {
	var out []int32
	for _, ps := range parts {
		out = append(out, ps...)
	}
	slices.Sort(out)
	return out
}

// forget drops the owed commits of partitions that left this member.
func (w *Worker) forget(parts map[string][]int32) {
	w.owedMu.Lock()
	defer w.owedMu.Unlock()
	for topic, ps := range parts {
		for _, p := range ps {
			delete(w.uncommitted[topic], p)
		}
	}
}
