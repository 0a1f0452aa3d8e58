// SPDX-License-Identifier: Apache-2.0

package docfeed

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/search"
)

// openIndex opens the index of cfg's directory for applying, created when
// absent; with no directory, a new one in a temporary directory (tmp),
// removed at Close: an index kept in memory never merges the segments
// each Apply adds, and slows down (see search.NewMemory).
func openIndex(cfg Config) (idx *search.Index, tmp string, err error) {
	if cfg.Dir == "" {
		tmp, err = os.MkdirTemp("", "kretrieve-index-")
		if err != nil {
			return nil, "", fmt.Errorf("index: %w", err)
		}
		idx, err = search.Create(filepath.Join(tmp, "index"), cfg.Name)
		if err != nil {
			_ = os.RemoveAll(tmp)
			return nil, "", err
		}
		return idx, tmp, nil
	}
	idx, err = search.OpenWritable(cfg.Dir)
	if err == nil {
		return idx, "", nil
	}
	if _, serr := os.Stat(cfg.Dir); serr == nil {
		return nil, "", fmt.Errorf("index %s: %w", cfg.Dir, err)
	}
	idx, err = search.Create(cfg.Dir, cfg.Name)
	return idx, "", err
}

// rebuild replaces the index with an empty one (its directory removed and
// created again) and forgets the position.
func (f *Follower) rebuild(ctx context.Context) error {
	if err := f.live.index().Close(); err != nil {
		f.logger.WarnContext(ctx, "closing the index to rebuild", "err", err)
	}
	dir := f.cfg.Dir
	if f.tmp != "" {
		dir = f.tmp
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("rebuild index: %w", err)
	}
	idx, tmp, err := openIndex(f.cfg)
	if err != nil {
		return fmt.Errorf("rebuild index: %w", err)
	}
	f.live.cur.Store(idx)
	f.tmp = tmp
	f.mu.Lock()
	f.pos = map[int32]int64{}
	f.mu.Unlock()
	return nil
}

// watchPartitions adds partitions created after the start to cons (from
// their start) and refreshes the end offsets the lag is measured to,
// every partitionsEvery until ctx is done.
func (f *Follower) watchPartitions(ctx context.Context, cons *kgo.Client) {
	adm := kadm.NewClient(f.admin)
	t := time.NewTicker(partitionsEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ends, err := adm.ListEndOffsets(ctx, f.cfg.Topic)
		if err != nil || ends.Error() != nil {
			continue
		}
		latest := offsetsOf(ends[f.cfg.Topic])
		added := map[int32]kgo.Offset{}
		f.mu.Lock()
		for p := range latest {
			if _, ok := f.ends[p]; !ok {
				added[p] = kgo.NewOffset().AtStart()
			}
		}
		f.ends = latest
		f.mu.Unlock()
		if len(added) > 0 {
			f.logger.InfoContext(ctx, "following new documents partitions", "partitions", len(added))
			cons.AddConsumePartitions(map[string]map[int32]kgo.Offset{f.cfg.Topic: added})
		}
	}
}

// checkReady marks the Follower ready once it has applied up to its
// catch-up target on every partition.
func (f *Follower) checkReady() {
	if f.ready.Load() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.target == nil {
		return
	}
	for p, t := range f.target {
		if f.pos[p] < t {
			return
		}
	}
	f.ready.Store(true)
	close(f.readyCh)
}

// WaitReady waits until the Follower is ready (see Ready) or ctx is done,
// and returns ctx's error then. A worker waits so before it joins its
// consumer group, so that it never answers from a partial index.
func (f *Follower) WaitReady(ctx context.Context) error {
	select {
	case <-f.readyCh:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// behind is how many records the Follower has still to apply to reach the
// latest end offsets it saw.
func (f *Follower) behind() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for p, e := range f.ends {
		n += max(e-f.pos[p], 0)
	}
	return n
}

// Ready returns nil once the Follower has caught up with the end offsets
// it saw when it started (and stays so), else an error saying how far
// behind it is.
func (f *Follower) Ready() error {
	if f.ready.Load() {
		return nil
	}
	f.mu.Lock()
	started := f.target != nil
	f.mu.Unlock()
	if !started {
		return errors.New("documents: not started: waiting for " + f.cfg.Topic)
	}
	return fmt.Errorf("documents: catching up on %s: %d records behind", f.cfg.Topic, f.behind())
}

// Status is what a Follower reports about its index: where it stands in
// the topic and what it holds, for operators (GET /v1/index) and for
// comparing a worker's documents with the topic's.
type Status struct {
	// Name is the index's name (Config.Name).
	Name string `json:"name"`
	// Topic is the documents topic.
	Topic string `json:"topic"`
	// Ready says whether the index has caught up (see Follower.Ready).
	Ready bool `json:"ready"`
	// Offsets is the position applied: per partition, the next offset.
	Offsets map[int32]int64 `json:"offsets"`
	// Behind is how many records are left to the latest end offsets seen.
	Behind int64 `json:"behind"`
	// Documents is the number of documents in the index.
	Documents int `json:"documents"`
	// Digest is search.Digest's string of the index's documents.
	Digest string `json:"digest"`
	// Applied and DeadLettered count the records applied and the records
	// dead-lettered since the process started.
	Applied      int64 `json:"applied"`
	DeadLettered int64 `json:"dead_lettered"`
	// NewestApplied is the timestamp of the newest record applied (zero
	// before the first).
	NewestApplied time.Time `json:"newest_applied"`
	// Lag is the apply lag as last measured (at start, on catching up and
	// every Config.LagInterval, by lag.MeasureReader): the records of the topic not applied yet, and
	// the age in seconds of the oldest of them; each null when not
	// measured (before the first measurement, or when it failed).
	Lag Lag `json:"lag"`
}

// Lag is how far an index is behind its topic, summed over the
// partitions.
type Lag struct {
	// Records is the records not applied yet.
	Records *int64 `json:"records"`
	// Seconds is the age of the oldest of them, 0 when none.
	Seconds *float64 `json:"seconds"`
	// Measured is when they were measured; absent when never.
	Measured time.Time `json:"measured,omitzero"`
}

// Status returns the Follower's status now.
func (f *Follower) Status() Status {
	f.mu.Lock()
	pos := maps.Clone(f.pos)
	f.mu.Unlock()
	s := Status{Name: f.cfg.Name, Topic: f.cfg.Topic, Ready: f.ready.Load(), Offsets: pos, Behind: f.behind(),
		Documents: f.live.Len(), Digest: f.live.Digest().String(),
		Applied: f.applied.Load(), DeadLettered: f.deadLettered.Load()}
	if n := f.live.Position().Newest; !n.IsZero() {
		s.NewestApplied = n.UTC()
	}
	parts, at := f.lag.LastAt()
	s.Lag = lagOf(parts)
	if s.Lag.Records != nil {
		s.Lag.Measured = at.UTC()
	}
	return s
}

// lagOf sums a measurement of the partitions' lags (lag.Sum).
func lagOf(parts []lag.PartitionLag) Lag {
	var l Lag
	records, seconds, _ := lag.Sum(parts)
	if records >= 0 {
		l.Records = &records
	}
	if seconds >= 0 {
		l.Seconds = &seconds
	}
	return l
}
