// SPDX-License-Identifier: Apache-2.0

package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/lag"
)

// QueueWaitInterval is how often a gateway measures the queue wait of the
// pipeline's first edge (see firstEdge).
const QueueWaitInterval = time.Second

// firstEdge measures the current queue wait of the pipeline's first edge:
// the age of the oldest record of the requests topic the first stage's
// group has not consumed (lag.Measure's seconds, the largest over the
// partitions), every QueueWaitInterval. It is what a request published
// now would wait at least before the first stage takes it. A gateway
// refuses searches whose budget it exceeds (gateway.WithQueueWait).
//
// Why not the queue waits the results report: under overload the requests
// that waited beyond their budget expire and report nothing, so the
// results would show only waits below the budget.
type firstEdge struct {
	baseOpts     []kgo.Opt
	group, topic string
	logger       *slog.Logger
	// wait is the last measured wait (ns), at when it was measured (Unix
	// ns; 0: never, or the last measurement failed).
	wait, at atomic.Int64
}

// Wait returns the last measured wait, unknown (false) when there is none
// or it is older than three intervals.
func (f *firstEdge) Wait() (time.Duration, bool) {
	at := f.at.Load()
	if at == 0 || time.Since(time.Unix(0, at)) > 3*QueueWaitInterval {
		return 0, false
	}
	return time.Duration(f.wait.Load()), true
}

// run measures until ctx is done. A failed measurement (the gateway may
// not describe the group, say) leaves the wait unknown, logged once at
// warn; so does a group that does not exist yet (nobody has committed in
// it), silently.
func (f *firstEdge) run(ctx context.Context) {
	t := time.NewTicker(QueueWaitInterval)
	defer t.Stop()
	warned := false
	for {
		if err := f.measure(ctx); err != nil && !warned && ctx.Err() == nil {
			f.logger.WarnContext(ctx, "queue wait of the first edge not measured: searches are not refused by it", "group", f.group, "err", err)
			warned = true
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// measure takes one measurement.
func (f *firstEdge) measure(ctx context.Context) error {
	mctx, cancel := context.WithTimeout(ctx, 5*QueueWaitInterval)
	defer cancel()
	start := time.Now()
	lags, err := lag.Measure(mctx, f.baseOpts, f.group)
	var parts []lag.PartitionLag
	for _, l := range lags {
		if l.Topic == f.topic {
			parts = append(parts, l)
		}
		if err == nil && l.Topic == "" && l.Err != nil && !errors.Is(l.Err, kerr.GroupIDNotFound) {
			err = l.Err // the group exists, but could not be measured
		}
	}
	_, secs, perr := lag.Sum(parts)
	if err == nil {
		err = perr
	}
	if err != nil || secs < 0 {
		f.at.Store(0)
		return err
	}
	f.wait.Store(int64(secs * float64(time.Second)))
	f.at.Store(start.UnixNano())
	return nil
}
