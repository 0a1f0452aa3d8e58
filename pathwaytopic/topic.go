// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
)

// DefaultTopic is the default aggregate topic, declared with kretrieve's
// other Kafka names in package messages.
const DefaultTopic = messages.DefaultPathwaysTopic

// Retention is how long the aggregate topic keeps a record that no newer
// record of its instance replaces: a process gone for longer disappears
// from the topic, not only from the view.
const Retention = time.Hour

// TopicConfigs returns the configuration EnsureTopic creates the topic
// with: compacted (the newest window of each instance is kept) and deleted
// after Retention (instances long gone go), in segments of a tenth of
// that so compaction and deletion have closed segments to work on; its
// records stamped by the broker (LogAppendTime), so that a Reader dates
// the windows it finds on one clock, not each writer's.
func TopicConfigs() map[string]*string {
	str := func(s string) *string { return &s }
	return map[string]*string{
		"cleanup.policy":         str("compact,delete"),
		"retention.ms":           str(strconv.FormatInt(Retention.Milliseconds(), 10)),
		"segment.ms":             str(strconv.FormatInt((Retention / 10).Milliseconds(), 10)),
		"message.timestamp.type": str("LogAppendTime"),
	}
}

// EnsureTopic creates the aggregate topic with one partition, the given
// replication factor (-1: the broker's default) and TopicConfigs when it
// does not exist. An existing topic is left as it is. A principal not
// allowed to create topics gets kafkaclient.EnsureTopics' treatment: fine
// when the topic exists, an error saying so when it does not.
func EnsureTopic(ctx context.Context, client *kgo.Client, replicationFactor int16, topic string) error {
	if replicationFactor == 0 {
		replicationFactor = -1
	}
	// CreateTopic returns the topic's error as its own.
	_, err := kadm.NewClient(client).CreateTopic(ctx, 1, replicationFactor, TopicConfigs(), topic)
	switch {
	case err == nil, errors.Is(err, kerr.TopicAlreadyExists):
		return nil
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed):
		return kafkaclient.EnsureTopics(ctx, client, kafkaclient.Config{Partitions: 1, ReplicationFactor: replicationFactor}, topic)
	}
	return fmt.Errorf("create topic %s: %w", topic, err)
}
