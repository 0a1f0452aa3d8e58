package kafkaacl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/messages"
)

// Default consumer groups: the same as pipeline.RetrievalGroup,
// pipeline.EnrichmentGroup and deadletters.DefaultReplayGroup (a test keeps
// them equal).
const (
	DefaultRetrievalGroup  = "retrieval"
	DefaultEnrichmentGroup = "enrichment"
	DefaultReplayGroup     = "kretrieve-dlq-replay"
)

// DefaultPathwaysTopic is the default topic of the pathway aggregates: the
// same as aggregate.DefaultTopic (a test keeps them equal).
const DefaultPathwaysTopic = "kretrieve.pathways"

// Role names.
const (
	RoleRetrieval  = "retrieval"
	RoleEnrichment = "enrichment"
	RoleGateway    = "gateway"
	RoleProducer   = "producer"
	RoleDLQ        = "dlq"
	RoleLag        = "lag"
	RolePathways   = "pathways"
)

// Names are the resource names the matrix is built from.
type Names struct {
	// Topics are the pipeline topics; their dead-letter topics follow.
	Topics messages.Topics
	// RetrievalGroup, EnrichmentGroup and ReplayGroup are the consumer
	// groups of the workers and of kretrieve dlq replay.
	RetrievalGroup, EnrichmentGroup, ReplayGroup string
	// PathwaysTopic is the compacted topic the long-running commands
	// publish their pathway aggregates to.
	PathwaysTopic string
}

// AllTopics returns the pipeline topics, their dead-letter topics and the
// pathways topic.
func (n Names) AllTopics() []string {
	return append(n.Topics.All(), n.PathwaysTopic)
}

// DefaultNames returns the default topics and groups.
func DefaultNames() Names {
	return Names{
		Topics:          messages.DefaultTopics(),
		RetrievalGroup:  DefaultRetrievalGroup,
		EnrichmentGroup: DefaultEnrichmentGroup,
		ReplayGroup:     DefaultReplayGroup,
		PathwaysTopic:   DefaultPathwaysTopic,
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
	// Name is the role's name (RoleRetrieval, ...).
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

// Roles returns every role's rules for the given names.
func Roles(n Names) []Role {
	t := n.Topics
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
	publishPathways := topic(n.PathwaysTopic, write, "publish pathway aggregates (`kretrieve pathways`)")
	return []Role{
		{RoleRetrieval, "`kretrieve retrieval`", []Rule{
			topic(t.Requests, read, "consume requests (DESCRIBE is implied: metadata, offsets, lag)"),
			topic(t.Candidates, write, "publish candidates"),
			topic(dlq(t.Requests), write, "dead-letter bad requests"),
			group(n.RetrievalGroup, read, "join the group, commit offsets (DESCRIBE implied: lag gauges)"),
			publishPathways,
		}},
		{RoleEnrichment, "`kretrieve enrichment`", []Rule{
			topic(t.Candidates, read, "consume candidates"),
			topic(t.Results, write, "publish results"),
			topic(dlq(t.Candidates), write, "dead-letter bad candidates"),
			group(n.EnrichmentGroup, read, "join the group, commit offsets"),
			publishPathways,
		}},
		{RoleGateway, "`kretrieve gateway`, `produce --wait`, `load`", []Rule{
			topic(t.Requests, write, "publish requests"),
			topic(t.Results, read, "collect results (no group)"),
			topic(dlq(t.Requests), read, "collect dead-lettered requests"),
			topic(dlq(t.Candidates), read, "collect dead-lettered candidates"),
			topic(t.Candidates, describe, "`/readyz`: every pipeline topic exists"),
			topic(dlq(t.Results), describe, "`/readyz`: every pipeline topic exists"),
			publishPathways,
		}},
		{RoleProducer, "`kretrieve produce` without `--wait`; your producers", []Rule{
			topic(t.Requests, write, "publish requests"),
		}},
		{RoleDLQ, "`kretrieve dlq list`, `dlq replay`", []Rule{
			topic(dlq(t.Requests), read, "read dead letters"),
			topic(dlq(t.Candidates), read, "read dead letters"),
			topic(dlq(t.Results), read, "read dead letters"),
			topic(t.Requests, write, "replay: republish"),
			topic(t.Candidates, write, "replay: republish"),
			topic(t.Results, write, "replay: republish"),
			group(n.ReplayGroup, read, "replay: commit what was replayed"),
		}},
		{RoleLag, "`kretrieve lag`", []Rule{
			group(n.RetrievalGroup, describe, "committed offsets"),
			group(n.EnrichmentGroup, describe, "committed offsets"),
			topic(t.Requests, read, "end offsets; timestamp of the oldest waiting record"),
			topic(t.Candidates, read, "end offsets; timestamp of the oldest waiting record"),
		}},
		{RolePathways, "`kretrieve pathways`", []Rule{
			topic(n.PathwaysTopic, read, "read the pathway aggregates"),
			group(n.RetrievalGroup, describe, "lag: committed offsets"),
			group(n.EnrichmentGroup, describe, "lag: committed offsets"),
			topic(t.Requests, read, "lag: end offsets; timestamp of the oldest waiting record"),
			topic(t.Candidates, read, "lag: end offsets; timestamp of the oldest waiting record"),
			topic(dlq(t.Requests), describe, "dead letters: start and end offsets"),
			topic(dlq(t.Candidates), describe, "dead letters: start and end offsets"),
			topic(dlq(t.Results), describe, "dead letters: start and end offsets"),
		}},
	}
}

// RoleNames lists the roles.
func RoleNames() []string {
	var out []string
	for _, r := range Roles(DefaultNames()) {
		out = append(out, r.Name)
	}
	return out
}

// Lookup returns the named role.
func Lookup(name string, n Names) (Role, error) {
	roles := Roles(n)
	i := slices.IndexFunc(roles, func(r Role) bool { return r.Name == name })
	if i < 0 {
		return Role{}, fmt.Errorf("unknown role %q (roles: %s)", name, strings.Join(RoleNames(), ", "))
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
