// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"cmp"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Retention defaults of the development broker, which keeps every record
// in memory besides its data directory: without them, a long run grows
// without bound (a 25-minute soak took it from 36 to 138 MB of memory and
// 1.3 GB on disk).
const (
	// DefaultRetention is how long the records of a topic without a
	// retention of its own are kept (Kafka's log.retention.ms; Kafka's
	// default is 7 days).
	DefaultRetention = time.Hour
	// DefaultRetentionBytes is the most a partition of such a topic keeps
	// (Kafka's log.retention.bytes; Kafka's default is no limit).
	DefaultRetentionBytes = 256 << 20
	// DefaultRetentionCheckInterval is how often retention and compaction
	// run (Kafka's log.retention.check.interval.ms, 5 minutes by default).
	DefaultRetentionCheckInterval = 30 * time.Second
)

// retentionOpts are the broker-wide retention settings of cfg.
func (c Config) retentionOpts() []kfake.Opt {
	ms, bytes := int64(-1), int64(-1)
	if c.Retention >= 0 {
		ms = cmp.Or(c.Retention, DefaultRetention).Milliseconds()
	}
	if c.RetentionBytes >= 0 {
		bytes = cmp.Or(c.RetentionBytes, DefaultRetentionBytes)
	}
	return []kfake.Opt{kfake.BrokerConfigs(map[string]string{
		"log.retention.ms":       strconv.FormatInt(ms, 10),
		"log.retention.bytes":    strconv.FormatInt(bytes, 10),
		"log.cleaner.backoff.ms": strconv.FormatInt(c.retentionCheck().Milliseconds(), 10),
	})}
}

// retentionCheck is c.RetentionCheckInterval or its default.
func (c Config) retentionCheck() time.Duration {
	return cmp.Or(c.RetentionCheckInterval, DefaultRetentionCheckInterval)
}

// compactedConfig is the configuration of the compacted topics the broker
// creates. kfake, unlike Kafka, applies time and size retention to
// compacted topics too: without a retention of their own, the broker's
// would delete the documents no update rewrote within it.
func compactedConfig() map[string]string {
	return map[string]string{"cleanup.policy": "compact", "retention.ms": "-1", "retention.bytes": "-1"}
}

// warnUnprotectedCompacted warns about each compacted topic of c without a
// retention of its own (created before the broker protected them, or by
// another client), whose records kfake deletes past the broker's
// retention although Kafka would keep them.
func warnUnprotectedCompacted(c *kfake.Cluster, cfg Config, logger *slog.Logger) {
	if cfg.Retention < 0 {
		return
	}
	for _, t := range cfg.CompactedTopics {
		info := c.TopicInfo(t)
		if info == nil {
			continue
		}
		if _, ok := info.Configs["retention.ms"]; ok {
			continue
		}
		logger.Warn("broker: a compacted topic has no retention.ms of its own: the development broker deletes its records older than the broker's retention (Kafka would keep them); set its retention.ms=-1, or start the broker with --retention -1",
			"topic", t, "retention", cmp.Or(cfg.Retention, DefaultRetention), "component", "broker")
	}
}

// cleaner applies retention every Config.RetentionCheckInterval until
// stop: kfake runs its own cleaner only while some topic is compacted or
// has a retention of its own.
type cleaner struct {
	stop     chan struct{}
	done     sync.WaitGroup
	stopOnce sync.Once
}

func startCleaner(c *kfake.Cluster, every time.Duration) *cleaner {
	cl := &cleaner{stop: make(chan struct{})}
	cl.done.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-cl.stop:
				return
			case <-t.C:
				c.ApplyRetention()
			}
		}
	})
	return cl
}

// close stops the cleaner and waits for it; it may be called again.
func (cl *cleaner) close() {
	cl.stopOnce.Do(func() { close(cl.stop) })
	cl.done.Wait()
}
