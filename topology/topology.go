// SPDX-License-Identifier: Apache-2.0

package topology

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kretrieve/kretrieve/messages"
)

// MaxStages bounds the stages of a pipeline: each adds a hop, a consumer
// group and an entry to every result's timings (messages.MaxStages).
const MaxStages = 16

// MaxNameLen bounds a stage name.
const MaxNameLen = 32

// Stage is one stage of the pipeline: a consumer group reading Input and
// writing Output.
type Stage struct {
	// Name identifies the stage: its worker command, ACL role and timings
	// entry. Lower-case ASCII letters, digits and '-', starting with a
	// letter, at most MaxNameLen bytes.
	Name string
	// Group is the stage's consumer group.
	Group string
	// Input is the topic the stage consumes.
	Input string
	// Output is the topic the stage publishes to.
	Output string
}

// Topology is the pipeline's stages in order (each stage's Output is the
// next stage's Input) and the documents topic their indexes follow.
type Topology struct {
	Stages []Stage
	// Documents is the compacted documents topic every stage's workers
	// apply to their own index, each reading all of its partitions with no
	// consumer group; its bad records go to its dead-letter topic. Empty:
	// no documents topic (the workers' indexes are static).
	Documents string
}

// Default returns the default pipeline over topics: retrieval reads
// requests and writes candidates; enrichment reads candidates and writes
// results. The stages are named messages.StageRetrieval and
// messages.StageEnrichment, and each stage's group is its name. The
// documents topic is topics.Documents, messages.DefaultDocumentsTopic when
// that is empty.
func Default(topics messages.Topics) Topology {
	docs := topics.Documents
	if docs == "" {
		docs = messages.DefaultDocumentsTopic
	}
	return Topology{Stages: []Stage{
		{Name: messages.StageRetrieval, Group: messages.StageRetrieval, Input: topics.Requests, Output: topics.Candidates},
		{Name: messages.StageEnrichment, Group: messages.StageEnrichment, Input: topics.Candidates, Output: topics.Results},
	}, Documents: docs}
}

// Validate reports whether t is a pipeline: between 1 and MaxStages
// stages with legal, distinct names and groups, chained (each Output is
// the next Input), over legal topics no two of which are equal or collide
// (see messages.ValidateTopics).
func (t Topology) Validate() error {
	if len(t.Stages) == 0 {
		return errors.New("topology: no stages")
	}
	if len(t.Stages) > MaxStages {
		return fmt.Errorf("topology: %d stages, at most %d", len(t.Stages), MaxStages)
	}
	var errs []error
	names, groups := map[string]bool{}, map[string]bool{}
	for i, s := range t.Stages {
		if err := validName(s.Name); err != nil {
			errs = append(errs, fmt.Errorf("stage %d: name %q: %w", i, s.Name, err))
		} else if names[s.Name] {
			errs = append(errs, fmt.Errorf("stage %d: name %q: used twice", i, s.Name))
		}
		names[s.Name] = true
		switch {
		case s.Group == "":
			errs = append(errs, fmt.Errorf("stage %s: no consumer group", s.Name))
		case groups[s.Group]:
			errs = append(errs, fmt.Errorf("stage %s: group %q: used by another stage", s.Name, s.Group))
		}
		groups[s.Group] = true
		if i > 0 && t.Stages[i-1].Output != s.Input {
			errs = append(errs, fmt.Errorf("stage %s reads %q but stage %s writes %q: each stage's input must be the previous stage's output",
				s.Name, s.Input, t.Stages[i-1].Name, t.Stages[i-1].Output))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	named := []messages.NamedTopic{{Name: t.Stages[0].Name + " input", Topic: t.Stages[0].Input}}
	for _, s := range t.Stages {
		named = append(named, messages.NamedTopic{Name: s.Name + " output", Topic: s.Output})
	}
	if t.Documents != "" {
		named = append(named, messages.NamedTopic{Name: "documents", Topic: t.Documents})
	}
	if err := messages.ValidateTopics(named...); err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	return nil
}

func validName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("must be 1 to %d bytes", MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || i > 0 && ('0' <= c && c <= '9' || c == '-')) {
			return errors.New("must be lower-case ASCII letters, digits and '-', starting with a letter")
		}
	}
	return nil
}

// Requests returns the first stage's input: the topic producers write
// requests to. Empty for an empty topology.
func (t Topology) Requests() string {
	if len(t.Stages) == 0 {
		return ""
	}
	return t.Stages[0].Input
}

// Results returns the last stage's output: the topic results arrive on.
// Empty for an empty topology.
func (t Topology) Results() string {
	if len(t.Stages) == 0 {
		return ""
	}
	return t.Stages[len(t.Stages)-1].Output
}

// Topics returns the pipeline topics in order: the requests topic, each
// stage's output, the last being the results topic.
func (t Topology) Topics() []string {
	if len(t.Stages) == 0 {
		return nil
	}
	out := []string{t.Requests()}
	for _, s := range t.Stages {
		out = append(out, s.Output)
	}
	return out
}

// Inputs returns the topics the stages consume, in order: every pipeline
// topic but the results topic.
func (t Topology) Inputs() []string { return t.each(func(s Stage) string { return s.Input }) }

// DeadLetterTopics returns the dead-letter topic of each pipeline topic,
// in the order of Topics.
func (t Topology) DeadLetterTopics() []string {
	topics := t.Topics()
	for i, topic := range topics {
		topics[i] = messages.DLQTopic(topic)
	}
	return topics
}

// All returns the pipeline topics followed by their dead-letter topics,
// then the documents topic and its dead-letter topic when there is one:
// every topic the pipeline needs.
func (t Topology) All() []string {
	all := append(t.Topics(), t.DeadLetterTopics()...)
	if t.Documents != "" {
		all = append(all, t.Documents, messages.DLQTopic(t.Documents))
	}
	return all
}

// Names returns the stage names in order.
func (t Topology) Names() []string { return t.each(func(s Stage) string { return s.Name }) }

// Groups returns the stages' consumer groups in order.
func (t Topology) Groups() []string { return t.each(func(s Stage) string { return s.Group }) }

// each returns f of every stage, in order.
func (t Topology) each(f func(Stage) string) []string {
	out := make([]string, 0, len(t.Stages))
	for _, s := range t.Stages {
		out = append(out, f(s))
	}
	return out
}

// Stage returns the stage named name.
func (t Topology) Stage(name string) (Stage, bool) {
	i := slices.IndexFunc(t.Stages, func(s Stage) bool { return s.Name == name })
	if i < 0 {
		return Stage{}, false
	}
	return t.Stages[i], true
}

// Insert returns a copy of t with s placed after the stage named after:
// s reads that stage's output, and the stage that read it before (if any)
// now reads s.Output. s.Group defaults to s.Name. The result is validated.
func (t Topology) Insert(after string, s Stage) (Topology, error) {
	i := slices.IndexFunc(t.Stages, func(st Stage) bool { return st.Name == after })
	if i < 0 {
		return Topology{}, fmt.Errorf("topology: no stage %q to insert %q after", after, s.Name)
	}
	if s.Group == "" {
		s.Group = s.Name
	}
	s.Input = t.Stages[i].Output
	out := Topology{Stages: slices.Insert(slices.Clone(t.Stages), i+1, s), Documents: t.Documents}
	if i+2 < len(out.Stages) {
		out.Stages[i+2].Input = s.Output
	}
	return out, out.Validate()
}
