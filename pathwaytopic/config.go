// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"log/slog"
	"time"
)

// Defaults.
const (
	// DefaultInterval is how often a Publisher publishes a window.
	DefaultInterval = 10 * time.Second
	// StaleIntervals is how many of its publisher's intervals may pass
	// after a window ends before the Reader considers it stale: its
	// process stopped or cannot publish.
	StaleIntervals = 3
	// MinStale is the least time after which a window is stale, whatever
	// its interval, to allow for scheduling and delivery delays.
	MinStale = 5 * time.Second
	// FinalTimeout bounds the last publish of Publisher.Run.
	FinalTimeout = 5 * time.Second
	// MaxAhead is how far after the moment a Reader receives it a
	// window may end: more than clocks disagree by (clocks in sync agree
	// within a second; the chaos run skewed one by 30 s), less than
	// would let a window from the future outlive its process. Later
	// windows are refused (ReasonFuture).
	MaxAhead = 5 * time.Minute
	// MaxRate bounds the records per second a series of one window may
	// claim (over at least MinInterval): a hundred times what one process
	// can consume. Windows claiming more are refused (ReasonRate).
	MaxRate = 10_000_000
	// MaxReaderSeries bounds the series a Reader holds over all its
	// instances' windows, and so its memory and the time of a View:
	// windows that would take it over are refused (ReasonBudget).
	MaxReaderSeries = 1 << 16
)

// config is the configuration of a Publisher or a Reader.
type config struct {
	topic      string
	interval   time.Duration
	service    string
	instance   string
	logger     *slog.Logger
	staleAfter time.Duration
	now        func() time.Time
	feeds      func() []Feed
	maxSeries  int
	published  func(err error)
}

func newConfig(opts []Option) config {
	c := config{topic: DefaultTopic, interval: DefaultInterval, service: "kretrieve", now: time.Now, maxSeries: MaxReaderSeries}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// Option configures a Publisher or a Reader; each says which it applies
// to. Only this package's With* functions make one; a nil Option is
// ignored.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithPublished sets a function a Publisher's Run calls after each window
// it tried to publish, with the error (nil: published), for example to
// count them. Nil is ignored.
func WithPublished(f func(err error)) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.published = f
		}
	})
}

// WithTopic sets the aggregate topic (Publisher and Reader). An empty name
// is ignored. Default: DefaultTopic.
func WithTopic(topic string) Option {
	return optionFunc(func(c *config) {
		if topic != "" {
			c.topic = topic
		}
	})
}

// WithInterval sets how often a Publisher publishes, between MinInterval
// and MaxInterval (NewPublisher fails otherwise). Zero is ignored.
// Default: DefaultInterval.
func WithInterval(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d != 0 {
			c.interval = d
		}
	})
}

// WithService sets the service name a Publisher's windows carry: the
// process's service.name. Empty is ignored. Default: "kretrieve".
func WithService(name string) Option {
	return optionFunc(func(c *config) {
		if name != "" {
			c.service = name
		}
	})
}

// WithInstance sets a Publisher's instance id, the key of its records:
// unique per process, at most MaxNameBytes. Empty is ignored. Default:
// NewInstanceID of the service.
func WithInstance(id string) Option {
	return optionFunc(func(c *config) { c.instance = id })
}

// WithLogger sets the logger of a Publisher's failures and of the records
// a Reader skips (nil is ignored). Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithStaleAfter sets how long after its end a window is stale for a
// Reader. Zero is ignored. Default: StaleIntervals of the window's own
// interval, and at least MinStale.
func WithStaleAfter(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.staleAfter = d
		}
	})
}

// WithFeeds sets what a Publisher reports of its process's indexes in
// every window (Publisher only): feeds is called at each publish, and the
// feeds it returns must be valid (see Feed) and at most MaxFeeds, else the
// window is not published. Default: none.
func WithFeeds(feeds func() []Feed) Option {
	return optionFunc(func(c *config) { c.feeds = feeds })
}

// withClock sets the clock (tests).
func withClock(now func() time.Time) Option {
	return optionFunc(func(c *config) { c.now = now })
}

// withMaxSeries sets the Reader's bound on series (tests).
func withMaxSeries(n int) Option {
	return optionFunc(func(c *config) { c.maxSeries = n })
}
