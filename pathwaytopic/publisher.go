// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/pathway"
)

// Source is the pathway state a Publisher aggregates:
// *kafkatrace.Metrics.
type Source interface {
	// Pathways returns the cumulative state of every pathway series.
	Pathways() []kafkatrace.PathwayStats
}

// seriesKey identifies a pathway series of a Source.
type seriesKey struct {
	cp           pathway.Checkpoint
	hash, parent uint64
}

// Publisher publishes the pathway state of one process to the aggregate
// topic, one window per interval. It is safe for concurrent use.
type Publisher struct {
	client *kgo.Client
	src    Source
	cfg    config

	mu    sync.Mutex
	start time.Time
	prev  map[seriesKey]kafkatrace.PathwayStats
	// failing is the last publish's error message, "" after a success:
	// a failure is logged at warn once, its repetitions at debug.
	failing string
}

// NewPublisher returns a Publisher of src's pathways through client, which
// it uses to produce (and does not close), with WithTopic, WithInterval,
// WithService, WithInstance and WithLogger. Its first window starts now.
// Create the topic first with EnsureTopic.
func NewPublisher(client *kgo.Client, src Source, opts ...Option) (*Publisher, error) {
	if client == nil || src == nil {
		return nil, errors.New("pathway aggregate publisher: client and source are required")
	}
	cfg := newConfig(opts)
	if cfg.instance == "" {
		cfg.instance = NewInstanceID(cfg.service)
	}
	if cfg.interval < MinInterval || cfg.interval > MaxInterval {
		return nil, fmt.Errorf("pathway aggregate publisher: interval %s not within %s and %s", cfg.interval, MinInterval, MaxInterval)
	}
	if err := checkName(ReasonWindow, "instance", cfg.instance); err != nil {
		return nil, err
	}
	if err := checkName(ReasonWindow, "service", cfg.service); err != nil {
		return nil, err
	}
	return &Publisher{client: client, src: src, cfg: cfg, start: cfg.now(), prev: map[seriesKey]kafkatrace.PathwayStats{}}, nil
}

// NewInstanceID returns a new instance id for a process of the service:
// "service@host/pid-random".
func NewInstanceID(service string) string {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	cut := func(s string, n int) string {
		if len(s) > n {
			s = s[:n]
		}
		return strings.ToValidUTF8(s, "")
	}
	return cut(service, 120) + "@" + cut(host, 100) + "/" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// Instance returns the publisher's instance id, its records' key.
func (p *Publisher) Instance() string { return p.cfg.instance }

// Interval returns the publisher's interval.
func (p *Publisher) Interval() time.Duration { return p.cfg.interval }

// Run publishes a window every interval until ctx is done, then a last
// one (Window.Final) within FinalTimeout, and returns nil. Failures are logged and do not
// stop it: the window of a failed publish is part of the next.
func (p *Publisher) Run(ctx context.Context) error {
	t := time.NewTicker(p.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinalTimeout)
			defer cancel()
			p.publishLogged(fctx, true)
			return nil
		case <-t.C:
			// A window not acknowledged in time is part of the next; if
			// it arrives after all, the next supersedes it.
			pctx, cancel := context.WithTimeout(ctx, max(p.cfg.interval, FinalTimeout))
			p.publishLogged(pctx, false)
			cancel()
		}
	}
}

func (p *Publisher) publishLogged(ctx context.Context, final bool) {
	err := p.publish(ctx, final)
	if p.cfg.published != nil {
		p.cfg.published(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil && p.failing != "":
		p.cfg.logger.InfoContext(ctx, "pathway aggregates published again", "topic", p.cfg.topic)
		p.failing = ""
	case err == nil:
	case err.Error() != p.failing:
		p.cfg.logger.WarnContext(ctx, "pathway aggregates not published", "topic", p.cfg.topic, "err", err)
		p.failing = err.Error()
	default:
		p.cfg.logger.DebugContext(ctx, "pathway aggregates not published", "topic", p.cfg.topic, "err", err)
	}
}

// Publish publishes one window now: what src measured since the last
// successful publish (or since NewPublisher). It returns once the broker
// has acknowledged the record, or with the error that prevented it, or
// with ctx's error when ctx ends first (the record may still arrive; the
// next window, which includes this one's measurements, supersedes it).
func (p *Publisher) Publish(ctx context.Context) error { return p.publish(ctx, false) }

// publish publishes one window, the last of the process when final.
func (p *Publisher) publish(ctx context.Context, final bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("publish pathway aggregate to %s: %w", p.cfg.topic, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.now()
	start := p.start
	if !now.After(start) {
		now = start.Add(time.Nanosecond)
	}
	if now.Sub(start) > MaxWindow {
		start = now.Add(-MaxWindow)
	}
	stats := p.src.Pathways()
	w := Window{Service: p.cfg.service, Instance: p.cfg.instance, Start: start, End: now, Interval: p.cfg.interval, Final: final}
	for _, st := range stats {
		prev := p.prev[seriesKey{st.Checkpoint, st.Hash, st.Parent}]
		// prev holds no exemplars: Sub keeps all of the histograms'.
		edge, origin := st.Edge.Sub(prev.Edge), st.Origin.Sub(prev.Origin)
		w.Series = append(w.Series, Series{Checkpoint: st.Checkpoint, Hash: st.Hash, Parent: st.Parent,
			Total: min(st.Edge.Count, MaxCount), Edge: clampSnapshot(edge), Origin: clampSnapshot(origin), Cohorts: st.Cohorts.Bins})
	}
	if len(w.Series) > MaxSeries {
		// Only with a Metrics bound far above the default: keep the
		// busiest series.
		slices.SortStableFunc(w.Series, func(a, b Series) int { return cmp.Compare(b.Edge.Count, a.Edge.Count) })
		p.cfg.logger.WarnContext(ctx, "pathway aggregate window cut", "series", len(w.Series), "kept", MaxSeries)
		w.Series = w.Series[:MaxSeries]
	}
	boundExemplars(w.Series)
	if n := boundCohorts(w.Series); n > 0 {
		p.cfg.logger.WarnContext(ctx, "pathway aggregate window: origin-time counts of the least busy series left out", "series", n, "max_bins", MaxWindowCohortBins)
	}
	if p.cfg.feeds != nil {
		w.Feeds = p.cfg.feeds()
	}
	value, err := w.Encode()
	if err != nil {
		return err
	}
	// The timestamp is the window's end, unless the topic has the broker
	// stamp its records (LogAppendTime): readers date the window by it.
	rec := &kgo.Record{Topic: p.cfg.topic, Key: []byte(p.cfg.instance), Value: value, Timestamp: now}
	// Not ProduceSync: a record already sent waits for its answer whatever
	// ctx says, and an unreachable broker would hold Run (and shutdown) up.
	done := make(chan error, 1)
	p.client.Produce(ctx, rec, func(_ *kgo.Record, err error) { done <- err })
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("publish pathway aggregate to %s: %w", p.cfg.topic, err)
	}
	p.start = now
	// Only the series the source holds now: those it dropped (see
	// kafkatrace.WithPathwayIdle) are forgotten here too.
	clear(p.prev)
	for _, st := range stats {
		st.Edge.Exemplars, st.Origin.Exemplars = nil, nil
		p.prev[seriesKey{st.Checkpoint, st.Hash, st.Parent}] = st
	}
	return nil
}

// boundExemplars keeps the newest MaxExemplars exemplars of each
// histogram (Snapshot.Exemplars are the oldest first), and
// MaxWindowExemplars in all: the busiest series' first.
func boundExemplars(series []Series) {
	order := make([]int, len(series))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(series[b].Edge.Count, series[a].Edge.Count) })
	budget := MaxWindowExemplars
	keep := func(ex []pathway.Exemplar) []pathway.Exemplar {
		n := min(len(ex), MaxExemplars, budget)
		budget -= n
		if n == 0 {
			return nil
		}
		return slices.Clone(ex[len(ex)-n:])
	}
	for _, i := range order {
		s := &series[i]
		s.Edge.Exemplars, s.Origin.Exemplars = keep(s.Edge.Exemplars), keep(s.Origin.Exemplars)
	}
}

// clampSnapshot keeps a window's counts within MaxCount (never reached in
// practice: 2^48 records in one window), consistently.
func clampSnapshot(s pathway.Snapshot) pathway.Snapshot {
	if s.Count <= MaxCount {
		return s
	}
	return pathway.Snapshot{}
}
