package consumers

import (
	"context"
	"slices"

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
	w.owedMu.Lock()
	defer w.owedMu.Unlock()
	for topic, ps := range parts {
		for _, p := range ps {
			delete(w.uncommitted[topic], p)
		}
	}
}
