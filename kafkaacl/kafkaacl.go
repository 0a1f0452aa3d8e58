// SPDX-License-Identifier: Apache-2.0

package kafkaacl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/topology"
)

// The names of the roles that are not stages; each stage's role is named
// after the stage.
const (
	RoleGateway  = "gateway"
	RoleProducer = "producer"
	RoleDLQ      = "dlq"
	RoleLag      = "lag"
	RolePathways = "pathways"
	RoleIngest   = "ingest"
)

// Names are the resource names the matrix is built from.
type Names struct {
	// Topology is the pipeline: each stage is a role reading its input
	// with its group and writing its output; the pipeline topics and
	// their dead-letter topics follow from it.
	Topology topology.Topology
	// ReplayGroup is the consumer group of kretrieve dlq replay.
	ReplayGroup string
	// PathwaysTopic is the compacted topic the long-running commands
	// publish their pathway aggregates to.
	PathwaysTopic string
}

// AllTopics returns the pipeline topics, their dead-letter topics and the
// pathways topic.
func (n Names) AllTopics() []string {
	return append(n.Topology.All(), n.PathwaysTopic)
}

// DefaultNames returns the default pipeline, topics and groups.
func DefaultNames() Names {
	return Names{
		Topology:      topology.Default(messages.DefaultTopics()),
		ReplayGroup:   messages.DefaultReplayGroup,
		PathwaysTopic: messages.DefaultPathwaysTopic,
	}
}

// Rule allows one operation on one resource.
type Rule struct {
	// Resource is kmsg.ACLResourceTypeTopic, Group or Cluster.
	Resource kmsg.ACLResourceType
	// Name is the topic or group name.
	Name string
	// Operation is what the rule allows.
	Operation kmsg.ACLOperation
	// Why says which work of the role needs it.
	Why string
}

// String is "TOPIC retrieval.requests READ".
func (r Rule) String() string {
	return fmt.Sprintf("%s %s %s", r.Resource, r.Name, r.Operation)
}

// Builder returns a kadm builder creating this rule as a literal ALLOW ACL
// for principal ("User:name") from any host, to pass to kadm's CreateACLs.
func (r Rule) Builder(principal string) *kadm.ACLBuilder {
	b := kadm.NewACLs().Allow(principal).AllowHosts("*").
		Operations(r.Operation).ResourcePatternType(kadm.ACLPatternLiteral)
	switch r.Resource {
	case kmsg.ACLResourceTypeTopic:
		b = b.Topics(r.Name)
	case kmsg.ACLResourceTypeGroup:
		b = b.Groups(r.Name)
	case kmsg.ACLResourceTypeCluster:
		b = b.Clusters()
	}
	return b
}

// Role is a kretrieve role and the ACLs it needs.
type Role struct {
	// Name is the role's name (a stage's name, such as messages.StageRetrieval, or RoleGateway, ...).
	Name string
	// Commands are the kretrieve commands that run as this role.
	Commands string
	// Rules are every ACL the role needs; it needs nothing else.
	Rules []Rule
}

// Allows reports whether r allows op on the resource, counting the
// DESCRIBE that READ and WRITE imply (as Kafka does).
func (r Role) Allows(resource kmsg.ACLResourceType, name string, op kmsg.ACLOperation) bool {
	for _, rule := range r.Rules {
		if rule.Resource != resource || rule.Name != name {
			continue
		}
		if rule.Operation == op || op == kmsg.ACLOperationDescribe &&
			(rule.Operation == kmsg.ACLOperationRead || rule.Operation == kmsg.ACLOperationWrite) {
			return true
		}
	}
	return false
}

// Roles returns every role's rules for the given names: one role per
// stage, in pipeline order, then the gateway, producer, dlq, lag and
// pathways roles, and the ingest role when the topology has a documents
// topic.
func Roles(n Names) []Role {
	topic := func(name string, op kmsg.ACLOperation, why string) Rule {
		return Rule{Resource: kmsg.ACLResourceTypeTopic, Name: name, Operation: op, Why: why}
	}
	group := func(name string, op kmsg.ACLOperation, why string) Rule {
		return Rule{Resource: kmsg.ACLResourceTypeGroup, Name: name, Operation: op, Why: why}
	}
	const (
		read     = kmsg.ACLOperationRead
		write    = kmsg.ACLOperationWrite
		describe = kmsg.ACLOperationDescribe
	)
	dlq := messages.DLQTopic
	t := n.Topology
	publishPathways := topic(n.PathwaysTopic, write, "publish pathway aggregates (`kretrieve pathways`)")
	var roles []Role
	for _, s := range t.Stages {
		rules := []Rule{
			topic(s.Input, read, "consume its input (DESCRIBE is implied: metadata, offsets, lag)"),
			topic(s.Output, write, "publish its output"),
			topic(dlq(s.Input), write, "dead-letter the input records it cannot process"),
			group(s.Group, read, "join the group, commit offsets (DESCRIBE implied: lag gauges)"),
			topic(s.Input, kmsg.ACLOperationDescribeConfigs, "lag gauges: the input's retention.ms, for the retention headroom"),
			publishPathways,
		}
		if t.Documents != "" {
			rules = append(rules,
				topic(t.Documents, read, "apply the documents to its index (all partitions, no group)"),
				topic(dlq(t.Documents), write, "dead-letter the documents it cannot apply"))
		}
		roles = append(roles, Role{s.Name, "`kretrieve " + s.Name + "`", rules})
	}

	gateway := []Rule{
		topic(t.Requests(), write, "publish requests"),
		topic(t.Requests(), read, "admission: the timestamp of the oldest request the first stage has not taken (its queue wait)"),
		topic(t.Results(), read, "collect results (no group)"),
	}
	if len(t.Stages) > 0 {
		gateway = append(gateway, group(t.Stages[0].Group, describe, "admission: the first stage's committed offsets (its queue wait)"))
	}
	for _, in := range t.Inputs() {
		gateway = append(gateway, topic(dlq(in), read, "collect dead-lettered "+in))
	}
	for _, out := range t.Stages[:max(len(t.Stages)-1, 0)] {
		gateway = append(gateway, topic(out.Output, describe, "`/readyz`: every pipeline topic exists"))
	}
	gateway = append(gateway, topic(dlq(t.Results()), describe, "`/readyz`: every pipeline topic exists"), publishPathways)

	var dlqRules []Rule
	for _, d := range t.DeadLetterTopics() {
		dlqRules = append(dlqRules, topic(d, read, "read dead letters"))
	}
	for _, p := range t.Topics() {
		dlqRules = append(dlqRules, topic(p, write, "replay: republish"))
	}
	dlqRules = append(dlqRules, group(n.ReplayGroup, read, "replay: commit what was replayed"))
	lagRules, pathwaysRules := observerRules(n)
	return withIngest(append(roles,
		Role{RoleGateway, "`kretrieve gateway`, `produce --wait`, `load`", gateway},
		Role{RoleProducer, "`kretrieve produce` without `--wait`; your producers", []Rule{
			topic(t.Requests(), write, "publish requests"),
		}},
		Role{RoleDLQ, "`kretrieve dlq list`, `dlq replay`", dlqRules},
		Role{RoleLag, "`kretrieve lag`", lagRules},
		Role{RolePathways, "`kretrieve pathways`", pathwaysRules},
	), t)
}

// observerRules returns the rules of the lag and pathways roles, which
// measure the groups' lag, the indexes' lag (when the topology has a
// documents topic) and, for pathways, read the windows and count the dead
// letters.
func observerRules(n Names) (lagRules, pathwaysRules []Rule) {
	topic := func(name string, op kmsg.ACLOperation, why string) Rule {
		return Rule{Resource: kmsg.ACLResourceTypeTopic, Name: name, Operation: op, Why: why}
	}
	read, describe := kmsg.ACLOperationRead, kmsg.ACLOperationDescribe
	t := n.Topology
	for _, g := range t.Groups() {
		lagRules = append(lagRules, Rule{Resource: kmsg.ACLResourceTypeGroup, Name: g, Operation: describe, Why: "committed offsets"})
	}
	for _, in := range t.Inputs() {
		lagRules = append(lagRules, topic(in, read, "end offsets; timestamp of the oldest waiting record"),
			topic(in, kmsg.ACLOperationDescribeConfigs, "retention.ms, for the retention headroom"))
	}
	if t.Documents != "" {
		lagRules = append(lagRules, topic(t.Documents, read, "end offsets; timestamp of the oldest record a worker's index has not applied"))
	}
	pathwaysRules = append(pathwaysRules, topic(n.PathwaysTopic, read, "read the pathway aggregates"))
	for _, r := range lagRules {
		r.Why = "lag: " + r.Why
		pathwaysRules = append(pathwaysRules, r)
	}
	if t.Documents != "" {
		// Where the workers' indexes stand is in the pathway windows.
		lagRules = append(lagRules, topic(n.PathwaysTopic, read, "index lag: where the workers' indexes stand (pathway windows)"))
	}
	for _, d := range t.DeadLetterTopics() {
		pathwaysRules = append(pathwaysRules, topic(d, describe, "dead letters: start and end offsets"))
	}
	return lagRules, pathwaysRules
}

// withIngest appends the ingest role to roles when t has a documents topic.
func withIngest(roles []Role, t topology.Topology) []Role {
	if t.Documents == "" {
		return roles
	}
	topic := func(op kmsg.ACLOperation, why string) Rule {
		return Rule{Resource: kmsg.ACLResourceTypeTopic, Name: t.Documents, Operation: op, Why: why}
	}
	return append(roles, Role{RoleIngest, "`kretrieve ingest`; your document producers", []Rule{
		topic(kmsg.ACLOperationWrite, "publish documents and tombstones"),
		topic(kmsg.ACLOperationRead, "skip unchanged documents: read the hashes on the topic"),
	}})
}

// RoleNames lists the roles of the default names.
func RoleNames() []string { return roleNames(DefaultNames()) }

func roleNames(n Names) []string {
	var out []string
	for _, r := range Roles(n) {
		out = append(out, r.Name)
	}
	return out
}

// Lookup returns the named role.
func Lookup(name string, n Names) (Role, error) {
	roles := Roles(n)
	i := slices.IndexFunc(roles, func(r Role) bool { return r.Name == name })
	if i < 0 {
		return Role{}, fmt.Errorf("unknown role %q (roles: %s)", name, strings.Join(roleNames(n), ", "))
	}
	return roles[i], nil
}

// Markdown renders roles as the table of docs/security.md: role, commands, resource
// type, name (literal pattern), operation, and why.
func Markdown(roles []Role) string {
	var b strings.Builder
	b.WriteString("| Role | Commands | Resource | Name (literal) | Operation | Needed to |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range roles {
		for i, rule := range r.Rules {
			role, cmds := "", ""
			if i == 0 {
				role, cmds = "**"+r.Name+"**", r.Commands
			}
			fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s | %s |\n", role, cmds, rule.Resource, rule.Name, rule.Operation, rule.Why)
		}
	}
	return b.String()
}
