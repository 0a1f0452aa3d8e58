// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// DefaultRetentionRefresh is how long a topic's retention.ms is cached.
const DefaultRetentionRefresh = 5 * time.Minute

// The configs of the time records are kept: the topic's, and the broker's
// default for topics without one.
const (
	retentionKey       = "retention.ms"
	brokerRetentionKey = "log.retention.ms"
)

// Retentions caches topics' retention.ms, for the retention headroom
// (Health.Headroom): each topic is described again only when its value is
// older than the refresh interval, all due topics in one request.
// A Retentions is safe for concurrent use.
type Retentions struct {
	baseOpts []kgo.Opt
	refresh  time.Duration

	mu      sync.Mutex
	byTopic map[string]retentionAt
}

// retentionAt is a topic's retention (-1: infinite) described at at.
type retentionAt struct {
	retention time.Duration
	at        time.Time
}

// NewRetentions returns a cache describing topics with clients of
// baseOpts (see Measure), again after refresh (0: DefaultRetentionRefresh).
func NewRetentions(baseOpts []kgo.Opt, refresh time.Duration) *Retentions {
	if refresh <= 0 {
		refresh = DefaultRetentionRefresh
	}
	return &Retentions{baseOpts: slices.Clone(baseOpts), refresh: refresh, byTopic: map[string]retentionAt{}}
}

// Get returns the retention of topics, by topic: -1 when infinite
// (retention.ms -1). A topic that could not be described is missing, and
// the error says why; it is described again at the next Get.
func (r *Retentions) Get(ctx context.Context, topics []string) (map[string]time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	var due []string
	for _, t := range topics {
		if c, ok := r.byTopic[t]; (!ok || now.Sub(c.at) >= r.refresh) && !slices.Contains(due, t) {
			due = append(due, t)
		}
	}
	var err error
	if len(due) > 0 {
		err = r.describe(ctx, due, now)
	}
	out := make(map[string]time.Duration, len(topics))
	for _, t := range topics {
		if c, ok := r.byTopic[t]; ok {
			out[t] = c.retention
		}
	}
	return out, err
}

// describe describes topics' configs and caches their retention as of
// now. Called with r.mu held.
func (r *Retentions) describe(ctx context.Context, topics []string, now time.Time) error {
	client, err := kgo.NewClient(kafkaclient.ReadOnly(r.baseOpts)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer client.Close()
	rcs, err := kadm.NewClient(client).DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return fmt.Errorf("describe topic configs: %w", err)
	}
	var errs []error
	for _, rc := range rcs {
		if rc.Err != nil {
			errs = append(errs, fmt.Errorf("topic %s: %w", rc.Name, rc.Err))
			continue
		}
		d, err := retentionOf(rc.Configs)
		if err != nil {
			errs = append(errs, fmt.Errorf("topic %s: %w", rc.Name, err))
			continue
		}
		r.byTopic[rc.Name] = retentionAt{retention: d, at: now}
	}
	return errors.Join(errs...)
}

// retentionOf reads retention.ms from a topic's configs: -1 (infinite)
// for any negative value. Kafka describes a topic's retention.ms resolved
// (its own, or the broker's default through synonyms); kfake, the
// development broker, describes retention.ms at its static default unless
// the topic sets it, and lists the broker's setting apart, under the
// broker's name log.retention.ms. So: the topic's own retention.ms first,
// then log.retention.ms, then retention.ms.
func retentionOf(configs []kadm.Config) (time.Duration, error) {
	var topic, broker, resolved *kadm.Config
	for i, c := range configs {
		switch {
		case c.Key == retentionKey && c.Source == kmsg.ConfigSourceDynamicTopicConfig:
			topic = &configs[i]
		case c.Key == brokerRetentionKey:
			broker = &configs[i]
		case c.Key == retentionKey:
			resolved = &configs[i]
		}
	}
	c := cmp.Or(topic, broker, resolved)
	if c == nil {
		return 0, errors.New(retentionKey + " not described")
	}
	if c.Value == nil {
		return 0, errors.New(c.Key + " has no value")
	}
	ms, err := strconv.ParseInt(*c.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", c.Key, err)
	}
	if ms < 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return -1, nil // infinite, or beyond what a Duration holds
	}
	return time.Duration(ms) * time.Millisecond, nil
}
