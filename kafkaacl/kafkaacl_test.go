// SPDX-License-Identifier: Apache-2.0

package kafkaacl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/kafkaacl"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/topology"
)

// TestDocsListTheMatrix keeps docs/security.md's ACL table equal to the code's.
func TestDocsListTheMatrix(t *testing.T) {
	readme, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	table := kafkaacl.Markdown(kafkaacl.Roles(kafkaacl.DefaultNames()))
	if !strings.Contains(string(readme), table) {
		t.Fatalf("docs/security.md lacks the ACL table; paste:\n%s", table)
	}
}

func TestLookup(t *testing.T) {
	for _, name := range kafkaacl.RoleNames() {
		r, err := kafkaacl.Lookup(name, kafkaacl.DefaultNames())
		if err != nil || r.Name != name || len(r.Rules) == 0 {
			t.Fatalf("%s: %+v %v", name, r, err)
		}
	}
	if _, err := kafkaacl.Lookup("admin", kafkaacl.DefaultNames()); err == nil || !strings.Contains(err.Error(), "retrieval, enrichment") {
		t.Fatalf("unknown role: %v", err)
	}
}

const adminPass = "admin-secret"

// aclBroker starts a broker enforcing ACLs with superuser admin and one user
// per role (named after it, password "<role>-pw") holding the role's ACLs.
func aclBroker(t *testing.T) *broker.Broker {
	t.Helper()
	users := []broker.User{{Name: "admin", Password: kafkaclient.NewSecret(adminPass), Superuser: true}}
	for _, r := range kafkaacl.Roles(kafkaacl.DefaultNames()) {
		users = append(users, broker.User{Name: r.Name, Password: kafkaclient.NewSecret(r.Name + "-pw"), ACLs: r.Rules})
	}
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DefaultPartitions: 1, Users: users, EnforceACLs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func clientFor(t *testing.T, b *broker.Broker, user, pass string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	c := kafkaclient.Config{Brokers: []string{b.Addr()}, SASL: kafkaclient.SASLConfig{Mechanism: "SCRAM-SHA-256", Username: user, Password: kafkaclient.NewSecret(pass)}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(kafkaclient.Options(c, nil, nil), append(opts, kgo.RetryTimeout(5*time.Second))...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func allTopics() []string { return kafkaacl.DefaultNames().AllTopics() }

func allGroups() []string {
	n := kafkaacl.DefaultNames()
	return append(n.Topology.Groups(), n.ReplayGroup)
}

// TestEnsureTopicsWithoutCreate: a role cannot create topics; once an
// administrator has, it starts.
func TestEnsureTopicsWithoutCreate(t *testing.T) {
	b := aclBroker(t)
	kc := kafkaclient.Config{Brokers: []string{b.Addr()}, Partitions: 1}
	retrieval := clientFor(t, b, "retrieval", "retrieval-pw")
	err := kafkaclient.EnsureTopics(t.Context(), retrieval, kc, allTopics()...)
	if err == nil || !strings.Contains(err.Error(), "topic retrieval.requests does not exist and this principal is not authorized to create it") ||
		strings.Contains(err.Error(), "retrieval.results") {
		t.Fatalf("err = %v", err)
	}
	admin := clientFor(t, b, "admin", adminPass)
	if err := kafkaclient.EnsureTopics(t.Context(), admin, kc, allTopics()...); err != nil {
		t.Fatal(err)
	}
	for _, r := range kafkaacl.RoleNames() {
		if err := kafkaclient.EnsureTopics(t.Context(), clientFor(t, b, r, r+"-pw"), kc, allTopics()...); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}

// TestRolesGetExactlyTheirACLs tries every operation of the matrix on every
// pipeline topic and group as every role: allowed exactly where the role's
// rules say so, refused everywhere else.
func TestRolesGetExactlyTheirACLs(t *testing.T) {
	b := aclBroker(t)
	admin := clientFor(t, b, "admin", adminPass)
	ctx := t.Context()
	if err := kafkaclient.EnsureTopics(ctx, admin, kafkaclient.Config{Partitions: 1}, allTopics()...); err != nil {
		t.Fatal(err)
	}
	for _, topic := range allTopics() {
		if err := admin.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	ops := []struct {
		resource kmsg.ACLResourceType
		op       kmsg.ACLOperation
		names    []string
		try      func(ctx context.Context, t *testing.T, user, name string, role kafkaacl.Role) error
	}{
		{kmsg.ACLResourceTypeTopic, kmsg.ACLOperationRead, allTopics(), func(ctx context.Context, t *testing.T, user, name string, _ kafkaacl.Role) error {
			cl := clientFor(t, b, user, user+"-pw", kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{name: {0: kgo.NewOffset().AtStart()}}))
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				if err := fs.Err0(); err != nil {
					return err
				}
				if fs.NumRecords() > 0 {
					return nil
				}
			}
			return ctx.Err()
		}},
		{kmsg.ACLResourceTypeTopic, kmsg.ACLOperationWrite, allTopics(), func(ctx context.Context, t *testing.T, user, name string, _ kafkaacl.Role) error {
			return clientFor(t, b, user, user+"-pw").ProduceSync(ctx, &kgo.Record{Topic: name, Value: []byte("y")}).FirstErr()
		}},
		{kmsg.ACLResourceTypeTopic, kmsg.ACLOperationDescribe, allTopics(), func(ctx context.Context, t *testing.T, user, name string, _ kafkaacl.Role) error {
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, clientFor(t, b, user, user+"-pw"))
			if err != nil {
				return err
			}
			return kerr.ErrorForCode(resp.Topics[0].ErrorCode)
		}},
		{kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, allGroups(), func(ctx context.Context, t *testing.T, user, name string, role kafkaacl.Role) error {
			// Commit on a topic the role may read, so that only the group decides.
			topic := allTopics()[0]
			for _, r := range role.Rules {
				if r.Resource == kmsg.ACLResourceTypeTopic && r.Operation == kmsg.ACLOperationRead {
					topic = r.Name
				}
			}
			var offs kadm.Offsets
			offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 0, LeaderEpoch: -1})
			resp, err := kadm.NewClient(clientFor(t, b, user, user+"-pw")).CommitOffsets(ctx, name, offs)
			if err != nil {
				return err
			}
			if err := resp.Error(); err != nil && !errors.Is(err, kerr.TopicAuthorizationFailed) {
				return err
			}
			return nil
		}},
		{kmsg.ACLResourceTypeGroup, kmsg.ACLOperationDescribe, allGroups(), func(ctx context.Context, t *testing.T, user, name string, _ kafkaacl.Role) error {
			described, err := kadm.NewClient(clientFor(t, b, user, user+"-pw")).DescribeGroups(ctx, name)
			if err != nil {
				return err
			}
			return described.Error()
		}},
	}
	refused := func(err error) bool {
		return errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.GroupAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed)
	}
	for _, role := range kafkaacl.Roles(kafkaacl.DefaultNames()) {
		t.Run(role.Name, func(t *testing.T) {
			for _, o := range ops {
				for _, name := range o.names {
					ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
					err := o.try(ctx, t, role.Name, name, role)
					cancel()
					want := role.Allows(o.resource, name, o.op)
					what := fmt.Sprintf("%s %s %s", o.resource, name, o.op)
					switch {
					case want && err != nil:
						t.Errorf("%s: refused: %v", what, err)
					case !want && !refused(err):
						t.Errorf("%s: allowed outside the role's ACLs (err %v)", what, err)
					}
				}
			}
		})
	}
}

// TestRolesFollowTheTopology: a stage inserted into the topology gets its
// own role, and the roles that span the pipeline cover its topics and
// group, with nothing else changed.
func TestRolesFollowTheTopology(t *testing.T) {
	n := kafkaacl.DefaultNames()
	var err error
	n.Topology, err = n.Topology.Insert(messages.StageRetrieval, topology.Stage{Name: "rerank", Output: "retrieval.reranked"})
	if err != nil {
		t.Fatal(err)
	}
	roles := kafkaacl.Roles(n)
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.Name
	}
	if want := []string{"retrieval", "rerank", "enrichment", "gateway", "producer", "dlq", "lag", "pathways", "ingest"}; !slices.Equal(names, want) {
		t.Fatalf("roles %v, want %v", names, want)
	}
	const (
		topic = kmsg.ACLResourceTypeTopic
		group = kmsg.ACLResourceTypeGroup
		read  = kmsg.ACLOperationRead
		write = kmsg.ACLOperationWrite
		desc  = kmsg.ACLOperationDescribe
	)
	for _, c := range []struct {
		role string
		res  kmsg.ACLResourceType
		name string
		op   kmsg.ACLOperation
		want bool
	}{
		{"rerank", topic, "retrieval.candidates", read, true},
		{"rerank", topic, "retrieval.reranked", write, true},
		{"rerank", topic, "retrieval.candidates.dlq", write, true},
		{"rerank", group, "rerank", read, true},
		{"rerank", topic, "retrieval.results", write, false},
		{"retrieval", topic, "retrieval.candidates", write, true},
		{"enrichment", topic, "retrieval.reranked", read, true},
		{"enrichment", topic, "retrieval.candidates", read, false},
		{"gateway", topic, "retrieval.reranked.dlq", read, true},
		{"gateway", topic, "retrieval.reranked", desc, true},
		{"gateway", topic, "retrieval.reranked", read, false},
		{"dlq", topic, "retrieval.reranked.dlq", read, true},
		{"dlq", topic, "retrieval.reranked", write, true},
		{"lag", group, "rerank", desc, true},
		{"lag", topic, "retrieval.reranked", read, true},
		{"lag", topic, "retrieval.results", read, false},
		{"pathways", topic, "retrieval.reranked.dlq", desc, true},
		{"rerank", topic, "retrieval.documents", read, true},
		{"rerank", topic, "retrieval.documents.dlq", write, true},
		{"ingest", topic, "retrieval.documents", write, true},
		{"ingest", topic, "retrieval.documents", read, true},
		{"ingest", topic, "retrieval.requests", write, false},
		{"gateway", topic, "retrieval.documents", read, false},
	} {
		r, err := kafkaacl.Lookup(c.role, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Allows(c.res, c.name, c.op); got != c.want {
			t.Errorf("%s allows %s %s %s = %v, want %v", c.role, c.res, c.name, c.op, got, c.want)
		}
	}
	if _, err := kafkaacl.Lookup("admin", n); err == nil || !strings.Contains(err.Error(), "retrieval, rerank, enrichment, gateway") {
		t.Errorf("unknown role: %v", err)
	}
	if roles := kafkaacl.Roles(kafkaacl.Names{}); len(roles) != 5 {
		t.Errorf("an empty topology has the 5 non-stage roles, got %d", len(roles))
	}
}
