// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// CleanupPolicy is the topic config naming what a topic does with old
// records: "delete" (Kafka's default), "compact", or both.
const CleanupPolicy = "cleanup.policy"

// EnsureCompactedTopics is [EnsureTopics] for topics that must be
// compacted, such as the documents topic, whose latest record per key is
// the state: it creates the missing ones with cleanup.policy=compact (and
// c's partition count and replication factor), and fails for a topic that
// exists with a cleanup.policy without "compact", naming the topic and the
// fix. Such a topic deletes records after its retention (seven days by
// default), and with them every key not rewritten since: documents would
// disappear. "compact,delete" is accepted (it compacts, and deletes after
// retention as configured on purpose).
//
// A principal that may not create topics gets EnsureTopics' treatment. A
// principal that may not describe a topic's configs (DESCRIBE_CONFIGS) gets
// no check of its policy: the topic is taken as it is.
func EnsureCompactedTopics(ctx context.Context, client *kgo.Client, c Config, topics ...string) error {
	// No time or size retention of their own: Kafka ignores it on a
	// compacted topic, the development broker (kfake) would apply its
	// default and delete documents no update rewrote within it.
	compact, forever := "compact", "-1"
	created, err := ensureTopics(ctx, client, c, map[string]*string{CleanupPolicy: &compact, "retention.ms": &forever, "retention.bytes": &forever}, topics...)
	if err != nil {
		return err
	}
	// A topic this call created is compacted; describing it at once
	// could reach a broker that does not know it yet.
	var existing []string
	for _, t := range topics {
		if !slices.Contains(created, t) {
			existing = append(existing, t)
		}
	}
	if len(existing) == 0 {
		return nil
	}
	return checkCompacted(ctx, kadm.NewClient(client), existing)
}

// checkCompacted fails for each topic whose cleanup.policy lacks
// "compact". Topics the principal may not describe, or that do not exist,
// are skipped. One request per topic: kadm fails a whole request on one
// unauthorized topic.
func checkCompacted(ctx context.Context, adm *kadm.Client, topics []string) error {
	var errs []error
	for _, topic := range topics {
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err == nil && len(rcs) == 1 {
			err = rcs[0].Err
		}
		switch {
		case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.UnknownTopicOrPartition):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("describe configs of topic %s: %w", topic, err))
			continue
		case len(rcs) != 1:
			errs = append(errs, fmt.Errorf("describe configs of topic %s: %d answers", topic, len(rcs)))
			continue
		}
		policy := "delete" // Kafka's default, when the broker leaves it out
		for _, cfg := range rcs[0].Configs {
			if cfg.Key == CleanupPolicy && cfg.Value != nil {
				policy = *cfg.Value
			}
		}
		if !slices.Contains(splitPolicy(policy), "compact") {
			errs = append(errs, fmt.Errorf("topic %s has cleanup.policy=%s, not compact: it would delete records after its retention, and with them every key not rewritten since; "+
				"make it compacted (kafka-configs.sh --bootstrap-server BROKER --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact) or delete it to have it recreated compacted",
				topic, policy, topic))
		}
	}
	return errors.Join(errs...)
}

// splitPolicy splits a cleanup.policy list value ("compact,delete").
func splitPolicy(v string) []string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}
