// SPDX-License-Identifier: Apache-2.0

package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/topology"
)

// Bounds of one Read.
const (
	// DefaultCatchUpTimeout bounds reading the pathways topic, when
	// Config.CatchUpTimeout does not say.
	DefaultCatchUpTimeout = 5 * time.Second
	// LagTimeout bounds measuring the groups' lag.
	LagTimeout = 10 * time.Second
	// MaxReasonLetters bounds the dead letters read per topic to count
	// their reasons (only when the topic's end offset moved).
	MaxReasonLetters = 10000
)

// Config is what a Source reads.
type Config struct {
	// Topology is the pipeline's stages: the Stages and Edges of a Status.
	Topology topology.Topology
	// KafkaOptions are the connection options of the Source's clients
	// (see kafkaclient.Options); they must not configure consuming.
	KafkaOptions []kgo.Opt
	// PathwaysTopic is the topic of the pathway windows. Default:
	// pathwaytopic.DefaultTopic.
	PathwaysTopic string
	// Groups are the consumer groups whose lag to measure; with none, no
	// lag is measured (every lag is unknown).
	Groups []string
	// Reasons says to read the dead letters to count their reasons, which
	// needs read access to the dead-letter topics (counting them needs
	// only describe). Without it, every Stage.TopReasons is empty.
	Reasons bool
	// CatchUpTimeout bounds reading the pathways topic. Default:
	// DefaultCatchUpTimeout.
	CatchUpTimeout time.Duration
	// Logger logs the pathway records refused. Default: slog.Default().
	Logger *slog.Logger
	// UnfinishedAfter is how long after its end an origin-time cohort is
	// judged complete or not (Completeness). Default:
	// DefaultUnfinishedAfter.
	UnfinishedAfter time.Duration
	// LagWindow is the span of reads the lag's health is judged over
	// (LagHealth). Default: DefaultLagWindow.
	LagWindow time.Duration
}

// Source reads the Status of a pipeline. It keeps the pathway windows and
// the dead letters' reasons between reads. It is safe for concurrent use;
// reads run one at a time.
type Source struct {
	cfg    Config
	client *kgo.Client
	adm    *kadm.Client

	mu     sync.Mutex
	closed bool
	reader *pathwaytopic.Reader
	// health judges the groups' lag over the reads.
	health *lagHealth
	// reasons caches each dead-letter topic's reasons until its end moves.
	reasons map[string]reasonsAt
}

// reasonsAt are a dead-letter topic's reasons when its ends summed to end.
type reasonsAt struct {
	end     int64
	reasons []ReasonCount
}

// New returns the Source of cfg. It connects on the first Read; Close it.
func New(cfg Config) (*Source, error) {
	if len(cfg.Topology.Stages) == 0 {
		return nil, errors.New("status: no stages")
	}
	cfg.PathwaysTopic = cmp.Or(cfg.PathwaysTopic, pathwaytopic.DefaultTopic)
	cfg.CatchUpTimeout = cmp.Or(cfg.CatchUpTimeout, DefaultCatchUpTimeout)
	cfg.LagWindow = cmp.Or(cfg.LagWindow, DefaultLagWindow)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	client, err := kgo.NewClient(cfg.KafkaOptions...)
	if err != nil {
		return nil, fmt.Errorf("status: kafka client: %w", err)
	}
	return &Source{cfg: cfg, client: client, adm: kadm.NewClient(client), reasons: map[string]reasonsAt{}, health: newLagHealth(cfg)}, nil
}

// Close closes the Source's clients; a Read after Close fails.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.reader != nil {
		s.reader.Close()
		s.reader = nil
	}
	s.client.Close()
}

// Read reads the pathway windows published since the last Read, measures
// the groups' lag and counts the dead letters. Its error is about the
// pathway windows (the Status then holds the windows read before); what
// else could not be measured is unknown in the Status, and said in its
// Errors, GroupErrors, Stage.Error and Lag.Error.
func (s *Source) Read(ctx context.Context) (Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Status{}, errors.New("status: source closed")
	}
	m := measured{topology: s.cfg.Topology, unfinishedAfter: s.cfg.UnfinishedAfter}
	view, err := s.readPathways(ctx)
	m.view = view
	if len(s.cfg.Groups) > 0 { // none would measure every group of the cluster
		lctx, cancel := context.WithTimeout(ctx, LagTimeout)
		m.lags, m.lagErr = lag.Measure(lctx, s.cfg.KafkaOptions, s.cfg.Groups...)
		if m.lagErr == nil {
			m.retentionErr = s.health.judge(lctx, m.lags, time.Now())
		}
		cancel()
	}
	m.dead = s.deadLetters(ctx)
	m.feeds = feedsOf(view)
	lctx, cancel := context.WithTimeout(ctx, LagTimeout)
	feedLagList, feedErr := MeasureFeeds(lctx, s.cfg.KafkaOptions, view)
	m.feedLags, m.feedLagErr = feedLags(feedLagList), feedErr
	cancel()
	m.now = time.Now()
	st := compute(m)
	st.PathwaysTopic = s.cfg.PathwaysTopic
	st.Time = time.Now().UTC()
	return st, err
}

// readPathways catches up with the pathways topic and returns its view.
func (s *Source) readPathways(ctx context.Context) (pathwaytopic.View, error) {
	if s.reader == nil {
		r, err := pathwaytopic.NewReader(s.cfg.KafkaOptions, pathwaytopic.WithTopic(s.cfg.PathwaysTopic), pathwaytopic.WithLogger(s.cfg.Logger))
		if err != nil {
			return pathwaytopic.View{Time: time.Now()}, fmt.Errorf("read %s: %w", s.cfg.PathwaysTopic, err)
		}
		s.reader = r
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CatchUpTimeout)
	err := s.reader.CatchUp(cctx)
	cancel()
	if err != nil {
		err = fmt.Errorf("read %s: %w", s.cfg.PathwaysTopic, err)
	}
	return s.reader.View(), err
}

// deadLetters counts the records of each stage input's dead-letter topic
// (end minus start offsets) and, when a topic's end moved since the last
// call, reads its letters again for their reasons.
func (s *Source) deadLetters(ctx context.Context) map[string]deadCount {
	var dlqs []string
	for _, st := range s.cfg.Topology.Stages {
		dlqs = append(dlqs, messages.DLQTopic(st.Input))
	}
	out := map[string]deadCount{}
	starts, err := s.adm.ListStartOffsets(ctx, dlqs...)
	var ends kadm.ListedOffsets
	if err == nil {
		ends, err = s.adm.ListEndOffsets(ctx, dlqs...)
	}
	for _, topic := range dlqs {
		if err != nil {
			out[topic] = deadCount{err: fmt.Errorf("%s: %w", topic, err)}
			continue
		}
		out[topic] = s.deadCount(ctx, topic, starts, ends)
	}
	return out
}

// deadCount counts one dead-letter topic's letters and their reasons.
func (s *Source) deadCount(ctx context.Context, topic string, starts, ends kadm.ListedOffsets) deadCount {
	var n, endSum int64
	ok := ends[topic] != nil
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic != topic {
			return
		}
		start, found := starts.Lookup(topic, o.Partition)
		if o.Err != nil || !found || start.Err != nil {
			ok = false
			return
		}
		n += max(o.Offset-start.Offset, 0)
		endSum += o.Offset
	})
	if !ok {
		return deadCount{err: fmt.Errorf("%s: offsets not listed", topic)}
	}
	d := deadCount{n: Of(n), reasons: []ReasonCount{}}
	cached, seen := s.reasons[topic]
	switch {
	case n == 0 || !s.cfg.Reasons:
	case seen && cached.end == endSum:
		d.reasons = cached.reasons
	default:
		letters, err := dlq.List(ctx, s.cfg.KafkaOptions, []string{topic}, MaxReasonLetters)
		if err != nil {
			d.err = err
			break
		}
		d.reasons = CountBy(letters, func(l deadletters.Letter) string { return l.Reason })
		d.reasons = d.reasons[:min(len(d.reasons), TopReasons)]
		s.reasons[topic] = reasonsAt{end: endSum, reasons: d.reasons}
	}
	return d
}
