// SPDX-License-Identifier: Apache-2.0

package docfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/backoff"
	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// Defaults of Config.
const (
	DefaultName               = "index"
	DefaultMaxBatch           = 2000
	DefaultMaxDeadLetterBytes = consumers.DefaultMaxDeadLetterBytes
	// DefaultLagInterval is how often a Follower measures its apply lag:
	// more often than a consumer group's (lag.DefaultInterval), since
	// freshness is counted in milliseconds.
	DefaultLagInterval = 5 * time.Second
	// partitionsEvery is how often a Follower looks for partitions added
	// to the topic and measures the end offsets it is behind.
	partitionsEvery = 5 * time.Second
)

// Config configures a Follower.
type Config struct {
	// Topic is the documents topic. Default: messages.DefaultDocumentsTopic.
	Topic string
	// Name is the index's name and its pathway checkpoints' consumer
	// group: the stage whose index it is, such as "retrieval". Default:
	// DefaultName.
	Name string
	// Dir is the index directory, kept across restarts: the Follower
	// resumes from the position it records. Empty: a temporary directory,
	// built from the topic at every start and removed at Close.
	Dir string
	// MaxBatch is the most records applied at once. Default:
	// DefaultMaxBatch.
	MaxBatch int
	// MaxDeadLetterBytes caps a dead letter's size (deadletters.Build).
	// Default: DefaultMaxDeadLetterBytes.
	MaxDeadLetterBytes int
	// LagInterval is how often the index's apply lag is measured (its
	// gauges and Status.Lag), besides once at start and once on catching
	// up. Default: DefaultLagInterval.
	LagInterval time.Duration
}

func (c Config) withDefaults() Config {
	if c.Topic == "" {
		c.Topic = messages.DefaultDocumentsTopic
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxDeadLetterBytes <= 0 {
		c.MaxDeadLetterBytes = DefaultMaxDeadLetterBytes
	}
	if c.LagInterval <= 0 {
		c.LagInterval = DefaultLagInterval
	}
	return c
}

// Option configures a Follower beyond its Config.
type Option interface{ apply(*Follower) }

type optionFunc func(*Follower)

func (f optionFunc) apply(fl *Follower) { f(fl) }

// WithLogger sets the logger; nil is ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return optionFunc(func(f *Follower) { f.logger = l }) }

// WithMeterProvider sets the meter provider of the index's apply-lag
// gauges (kretrieve.index.lag and kretrieve.index.lag.seconds, see
// lag.NewReaderMonitor); nil is ignored. Default: the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(f *Follower) { f.meterProvider = mp })
}

// Follower applies the documents topic to its index (see the package doc).
type Follower struct {
	cfg           Config
	clientOpts    []kgo.Opt
	tracer        *kafkatrace.Tracer
	logger        *slog.Logger
	meterProvider metric.MeterProvider
	admin         *kgo.Client  // admin requests and dead letters
	lag           *lag.Monitor // the apply lag, measured every Config.LagInterval
	live          Live
	tmp           string // the temporary directory of an index with no Config.Dir

	mu     sync.Mutex
	pos    map[int32]int64 // applied: every record before it, per partition
	target map[int32]int64 // the end offsets seen at start: caught up past them
	ends   map[int32]int64 // the latest end offsets seen

	ready        atomic.Bool
	readyCh      chan struct{} // closed when ready
	applied      atomic.Int64
	deadLettered atomic.Int64
}

// New opens (or creates) the index of cfg and returns a Follower that
// applies the topic to it once Run. tracer carries the pathways and spans
// of the documents applied; clientOpts are the Kafka connection options.
// Close the Follower when done.
func New(ctx context.Context, cfg Config, tracer *kafkatrace.Tracer, clientOpts []kgo.Opt, opts ...Option) (*Follower, error) {
	f := &Follower{cfg: cfg.withDefaults(), clientOpts: clientOpts, tracer: tracer, readyCh: make(chan struct{})}
	global.Apply(f, opts, Option.apply)
	f.logger = global.Logger(f.logger).With("documents_topic", f.cfg.Topic, "index", f.cfg.Name)
	idx, tmp, err := openIndex(f.cfg)
	if err != nil {
		return nil, err
	}
	f.live.cur.Store(idx)
	f.tmp = tmp
	f.pos = maps.Clone(idx.Position().Offsets)
	if f.pos == nil {
		f.pos = map[int32]int64{}
	}
	admin, err := kgo.NewClient(append(append([]kgo.Opt{}, clientOpts...), kgo.WithHooks(tracer))...)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("documents follower client: %w", err)
	}
	f.admin = admin
	f.lag, err = lag.NewReaderMonitor(clientOpts, lag.Reader{Name: f.cfg.Name, Topic: f.cfg.Topic, Offsets: f.offsets},
		lag.MonitorConfig{Interval: f.cfg.LagInterval}, lag.WithMeterProvider(f.meterProvider), lag.WithLogger(f.logger))
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("documents follower: %w", err)
	}
	return f, nil
}

// offsets returns a copy of the position applied, per partition.
func (f *Follower) offsets() map[int32]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.pos)
}

// Index returns the live index, for the stages' handlers.
func (f *Follower) Index() *Live { return &f.live }

// Close closes the Kafka client and the index, and removes the index's
// temporary directory when it has one.
func (f *Follower) Close() error {
	if f.lag != nil {
		_ = f.lag.Close()
	}
	if f.admin != nil {
		f.admin.Close()
	}
	err := f.live.index().Close()
	if f.tmp != "" {
		err = errors.Join(err, os.RemoveAll(f.tmp))
	}
	return err
}

// Run applies the topic until ctx is done: from the index's position (or
// from the start, rebuilding, as the package doc says), catching up, then
// following. It returns nil when ctx is done, or the error that stopped it
// (an index that cannot be written).
func (f *Follower) Run(ctx context.Context) error {
	start, err := f.start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	offsets := make(map[int32]kgo.Offset, len(start))
	for p, o := range start {
		offsets[p] = kgo.NewOffset().At(o)
	}
	cons, err := kgo.NewClient(append(append([]kgo.Opt{}, f.clientOpts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{f.cfg.Topic: offsets}),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.WithHooks(f.tracer))...)
	if err != nil {
		return fmt.Errorf("documents consumer: %w", err)
	}
	defer cons.Close()
	// The watchers stop with Run, whatever ends it.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Go(func() { f.watchPartitions(ctx, cons) })
	wg.Go(func() { _ = f.lag.Run(ctx) })
	wg.Go(func() {
		// Measured again as soon as it has caught up, so that the lag
		// measured at start (the whole topic) is not reported for a
		// whole interval after it stopped being true.
		select {
		case <-f.readyCh:
			_, _ = f.lag.Update(ctx)
		case <-ctx.Done():
		}
	})
	for {
		fs := cons.PollRecords(ctx, f.cfg.MaxBatch)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil
		}
		fs.EachError(func(topic string, p int32, err error) {
			f.logger.WarnContext(ctx, "documents fetch error", "partition", p, "err", err)
		})
		if recs := fs.Records(); len(recs) > 0 {
			if err := f.apply(ctx, recs); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// start decides where each partition starts (rebuilding the index when
// its position cannot be resumed from) and sets the catch-up target. It
// retries, about every second (equal jitter: the workers of a restarted
// cluster do not all ask at once), until the topic can be listed or ctx is
// done.
func (f *Follower) start(ctx context.Context) (map[int32]int64, error) {
	adm := kadm.NewClient(f.admin)
	for {
		starts, serr := adm.ListStartOffsets(ctx, f.cfg.Topic)
		ends, eerr := adm.ListEndOffsets(ctx, f.cfg.Topic)
		err := errors.Join(serr, eerr, starts.Error(), ends.Error())
		if err == nil && len(ends[f.cfg.Topic]) > 0 {
			return f.plan(ctx, offsetsOf(starts[f.cfg.Topic]), offsetsOf(ends[f.cfg.Topic]))
		}
		if err == nil {
			err = fmt.Errorf("topic %s has no partitions", f.cfg.Topic)
		}
		f.logger.WarnContext(ctx, "documents topic not readable yet; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff.Equal(time.Second)):
		}
	}
}

// offsetsOf returns the offsets of listed, by partition.
func offsetsOf(listed map[int32]kadm.ListedOffset) map[int32]int64 {
	out := make(map[int32]int64, len(listed))
	for p, o := range listed {
		out[p] = o.Offset
	}
	return out
}

// plan returns the start offset of every partition given the topic's log
// start and end offsets, rebuilding the index first when its position is
// before a log start or past an end, and sets the catch-up target.
func (f *Follower) plan(ctx context.Context, starts, ends map[int32]int64) (map[int32]int64, error) {
	f.mu.Lock()
	pos := maps.Clone(f.pos)
	f.mu.Unlock()
	if why := unresumable(f.live.Position(), f.cfg.Topic, starts, ends); why != "" {
		f.logger.WarnContext(ctx, "rebuilding the index from the start of the documents topic", "why", why)
		if err := f.rebuild(ctx); err != nil {
			return nil, err
		}
		pos = map[int32]int64{}
	}
	out := make(map[int32]int64, len(ends))
	for p := range ends {
		o, ok := pos[p]
		if !ok {
			// Nothing applied yet: everything before the log start is
			// gone, so that is where the partition stands (a partition
			// emptied by retention is caught up at once).
			o = starts[p]
		}
		out[p] = o
	}
	f.mu.Lock()
	maps.Copy(f.pos, out)
	f.target, f.ends = maps.Clone(ends), maps.Clone(ends)
	f.mu.Unlock()
	f.checkReady()
	f.logger.InfoContext(ctx, "following the documents topic", "behind", f.behind(), "documents", f.live.Len())
	return out, nil
}

// unresumable says why an index at pos cannot resume on topic with these
// log start and end offsets, or "" when it can.
func unresumable(pos search.Position, topic string, starts, ends map[int32]int64) string {
	if len(pos.Offsets) == 0 {
		return ""
	}
	if pos.Topic != "" && pos.Topic != topic {
		return fmt.Sprintf("the index follows %s, not %s", pos.Topic, topic)
	}
	for p, o := range pos.Offsets {
		end, ok := ends[p]
		switch {
		case !ok:
			return fmt.Sprintf("partition %d is gone: the topic was recreated", p)
		case o > end:
			return fmt.Sprintf("partition %d: applied up to %d, past its end %d: the topic was recreated", p, o, end)
		case o < starts[p]:
			return fmt.Sprintf("partition %d: applied up to %d, before its log start %d: records (tombstones among them) were deleted unseen", p, o, starts[p])
		}
	}
	return ""
}
