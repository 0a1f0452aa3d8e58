// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"errors"
	"fmt"
	"strings"
)

// Default topic names and the suffix of dead-letter topics.
const (
	DefaultRequestsTopic   = "retrieval.requests"
	DefaultCandidatesTopic = "retrieval.candidates"
	DefaultResultsTopic    = "retrieval.results"
	DLQSuffix              = ".dlq"
)

// The default names of the Kafka resources kretrieve uses beside the
// pipeline topics: the compacted topic the long-running commands publish
// their pathway aggregates to (package pathwaytopic) and the consumer group
// that records which dead letters were replayed (package ops/dlq).
// The ACL matrix (package kafkaacl) grants them.
const (
	DefaultPathwaysTopic = "kretrieve.pathways"
	DefaultReplayGroup   = "kretrieve-dlq-replay"
)

// MaxTopicLen is the longest topic name Kafka accepts.
const MaxTopicLen = 249

// DLQTopic returns the dead-letter topic for topic: topic + [DLQSuffix].
func DLQTopic(topic string) string {
	return topic + DLQSuffix
}

// Topics names the three pipeline topics and the documents topic. Each
// has a dead-letter topic named by [DLQTopic].
type Topics struct {
	// Requests receives [Request] payloads. Default [DefaultRequestsTopic].
	Requests string
	// Candidates receives [Candidates] payloads. Default [DefaultCandidatesTopic].
	Candidates string
	// Results receives [Result] payloads. Default [DefaultResultsTopic].
	Results string
	// Documents is the compacted topic of the documents every worker's
	// index follows; [DefaultTopics] sets [DefaultDocumentsTopic]. It is
	// optional here: empty leaves the choice to the pipeline (package
	// topology takes the default).
	Documents string
}

// DefaultTopics returns the default topic names.
func DefaultTopics() Topics {
	return Topics{
		Requests:   DefaultRequestsTopic,
		Candidates: DefaultCandidatesTopic,
		Results:    DefaultResultsTopic,
		Documents:  DefaultDocumentsTopic,
	}
}

// Validate reports whether every topic is a legal Kafka topic name whose
// dead-letter topic is legal too: not empty, not "." or "..", only ASCII
// letters, digits, '.', '_' and '-', and at most [MaxTopicLen] characters
// once [DLQSuffix] is appended. No topic may end with [DLQSuffix], and the
// topics must be distinct, also in Kafka's sense where '.' and '_' collide.
// An empty Documents is not checked.
func (t Topics) Validate() error {
	named := []NamedTopic{{"requests", t.Requests}, {"candidates", t.Candidates}, {"results", t.Results}}
	if t.Documents != "" {
		named = append(named, NamedTopic{"documents", t.Documents})
	}
	return ValidateTopics(named...)
}

// NamedTopic is a topic and the part it plays, which error messages name.
type NamedTopic struct {
	// Name says what the topic is for, such as "requests".
	Name string
	// Topic is the topic's name in Kafka.
	Topic string
}

// ValidateTopics applies the rules of [Topics.Validate] to any number of
// topics: each is a legal topic name whose dead-letter topic is legal too,
// and no two are equal or collide in Kafka's sense.
func ValidateTopics(named ...NamedTopic) error {
	for _, n := range named {
		if err := validateTopic(n.Topic); err != nil {
			return fmt.Errorf("%s topic: %w", n.Name, err)
		}
	}
	for i := range named {
		for j := i + 1; j < len(named); j++ {
			a, b := named[i], named[j]
			switch {
			case a.Topic == b.Topic:
				return fmt.Errorf("%s and %s topics are both %q", a.Name, b.Name, a.Topic)
			case collisionKey(a.Topic) == collisionKey(b.Topic):
				return fmt.Errorf("%s topic %q and %s topic %q collide: kafka treats '.' and '_' alike", a.Name, a.Topic, b.Name, b.Topic)
			}
		}
	}
	return nil
}

// All returns the three pipeline topics followed by their three
// dead-letter topics, then the documents topic and its dead-letter topic
// when Documents is set.
func (t Topics) All() []string {
	all := []string{
		t.Requests, t.Candidates, t.Results,
		DLQTopic(t.Requests), DLQTopic(t.Candidates), DLQTopic(t.Results),
	}
	if t.Documents != "" {
		all = append(all, t.Documents, DLQTopic(t.Documents))
	}
	return all
}

func validateTopic(topic string) error {
	switch {
	case topic == "":
		return errors.New("empty")
	case topic == "." || topic == "..":
		return fmt.Errorf("%q is not a legal name", topic)
	case len(topic)+len(DLQSuffix) > MaxTopicLen:
		return fmt.Errorf("longer than %d characters, leaving no room for %q", MaxTopicLen-len(DLQSuffix), DLQSuffix)
	case strings.HasSuffix(topic, DLQSuffix):
		return fmt.Errorf("%q ends with %q", topic, DLQSuffix)
	}
	for i := 0; i < len(topic); i++ {
		if !legalTopicByte(topic[i]) {
			return fmt.Errorf("%q: illegal character %q", topic, topic[i])
		}
	}
	return nil
}

func legalTopicByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// collisionKey maps topics that Kafka refuses to hold side by side (because
// their metric names would clash) to the same key.
func collisionKey(topic string) string {
	return strings.ReplaceAll(topic, ".", "_")
}
