// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/kafkaacl"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// cleanupPolicy returns topic's cleanup.policy and its source as the
// broker describes them.
func cleanupPolicy(t *testing.T, adm *kadm.Client, topic string) (string, kmsg.ConfigSource) {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(t.Context(), topic)
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rcs)
	}
	for _, c := range rcs[0].Configs {
		if c.Key == kafkaclient.CleanupPolicy {
			return c.MaybeValue(), c.Source
		}
	}
	t.Fatalf("%s: no %s in %v", topic, kafkaclient.CleanupPolicy, rcs[0].Configs)
	return "", 0
}

// TestEnsureCompactedTopics: a missing topic is created compacted with
// c's partitions; an existing compacted one (compact, or compact,delete)
// passes; one whose policy lacks compact, the broker default delete or
// an explicit delete, is an error naming the topic and the fix, and the
// others still get created.
//
// kfake, the development broker, describes cleanup.policy as Kafka does
// for what this needs: "delete" from DEFAULT_CONFIG when the topic sets
// nothing, the topic's value from DYNAMIC_TOPIC_CONFIG when it does. It
// differs from Kafka in that the default has no log.cleanup.policy
// broker synonym (a dynamic value's synonym is the default under the
// topic name) and in that CreateTopics does not validate config values
// (Kafka refuses cleanup.policy=foo with INVALID_CONFIG).
func TestEnsureCompactedTopics(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	c := kafkaclient.Config{Brokers: []string{b.Addr()}, Partitions: 3}
	client, err := kgo.NewClient(kafkaclient.Options(c, nil, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	adm := kadm.NewClient(client)
	ctx := t.Context()

	if err := kafkaclient.EnsureCompactedTopics(ctx, client, c, "docs"); err != nil {
		t.Fatal(err)
	}
	if policy, src := cleanupPolicy(t, adm, "docs"); policy != "compact" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("created topic: cleanup.policy=%s from %v", policy, src)
	}
	td, err := adm.ListTopics(ctx, "docs")
	if err != nil || len(td["docs"].Partitions) != 3 {
		t.Fatalf("partitions of docs: %v %v", td, err)
	}
	if err := kafkaclient.EnsureCompactedTopics(ctx, client, c, "docs"); err != nil {
		t.Fatalf("existing compacted topic: %v", err)
	}

	if err := kafkaclient.EnsureTopics(ctx, client, c, "plain"); err != nil {
		t.Fatal(err)
	}
	if policy, src := cleanupPolicy(t, adm, "plain"); policy != "delete" || src != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("plain topic: cleanup.policy=%s from %v", policy, src)
	}
	for topic, policy := range map[string]string{"explicit-delete": "delete", "both": "compact,delete"} {
		if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{kafkaclient.CleanupPolicy: &policy}, topic); err != nil {
			t.Fatal(err)
		}
	}
	if err := kafkaclient.EnsureCompactedTopics(ctx, client, c, "both"); err != nil {
		t.Fatalf("compact,delete: %v", err)
	}
	err = kafkaclient.EnsureCompactedTopics(ctx, client, c, "plain", "explicit-delete", "docs", "later")
	if err == nil {
		t.Fatal("delete-policy topics passed")
	}
	for _, want := range []string{"topic plain has cleanup.policy=delete, not compact", "topic explicit-delete has cleanup.policy=delete",
		"--entity-name plain --add-config cleanup.policy=compact", "--entity-name explicit-delete"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "docs") || strings.Contains(err.Error(), "later") {
		t.Errorf("error names a compacted topic:\n%v", err)
	}
	if policy, _ := cleanupPolicy(t, adm, "later"); policy != "compact" {
		t.Fatalf("topic created beside the failures: cleanup.policy=%s", policy)
	}
}

// TestEnsureCompactedTopicsWithoutRights: a principal that may write and
// describe the topic but neither create it nor describe its configs gets
// EnsureTopics' treatment (an error when the topic is missing) and no
// policy check once an administrator has created it.
func TestEnsureCompactedTopicsWithoutRights(t *testing.T) {
	const topic = "docs"
	rules := []kafkaacl.Rule{
		{Resource: kmsg.ACLResourceTypeTopic, Name: topic, Operation: kmsg.ACLOperationWrite},
		{Resource: kmsg.ACLResourceTypeTopic, Name: topic, Operation: kmsg.ACLOperationDescribe},
	}
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DefaultPartitions: 1, EnforceACLs: true, Users: []broker.User{
		{Name: "admin", Password: kafkaclient.NewSecret("admin-pw"), Superuser: true},
		{Name: "ingest", Password: kafkaclient.NewSecret("ingest-pw"), ACLs: rules},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	clientAs := func(user string) (*kgo.Client, kafkaclient.Config) {
		c := kafkaclient.Config{Brokers: []string{b.Addr()}, Partitions: 1,
			SASL: kafkaclient.SASLConfig{Mechanism: "SCRAM-SHA-256", Username: user, Password: kafkaclient.NewSecret(user + "-pw")}}
		cl, err := kgo.NewClient(append(kafkaclient.Options(c, nil, nil), kgo.RetryTimeout(5*time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl, c
	}
	ingest, ic := clientAs("ingest")
	err = kafkaclient.EnsureCompactedTopics(t.Context(), ingest, ic, topic)
	if err == nil || !strings.Contains(err.Error(), "topic docs does not exist and this principal is not authorized to create it") {
		t.Fatalf("missing topic: %v", err)
	}
	admin, ac := clientAs("admin")
	if err := kafkaclient.EnsureTopics(t.Context(), admin, ac, topic); err != nil {
		t.Fatal(err)
	}
	// A delete-policy topic, but the principal cannot see that.
	if err := kafkaclient.EnsureCompactedTopics(t.Context(), ingest, ic, topic); err != nil {
		t.Fatalf("existing topic, no DESCRIBE_CONFIGS: %v", err)
	}
	if err := kafkaclient.EnsureCompactedTopics(t.Context(), admin, ac, topic); err == nil || !strings.Contains(err.Error(), "cleanup.policy=delete") {
		t.Fatalf("the administrator sees the policy: %v", err)
	}
}
