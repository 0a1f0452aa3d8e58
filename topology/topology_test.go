// SPDX-License-Identifier: Apache-2.0

package topology_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/topology"
)

func TestDefaultIsTheTwoStagePipeline(t *testing.T) {
	topics := messages.DefaultTopics()
	d := topology.Default(topics)
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := d.All(), topics.All(); !slices.Equal(got, want) {
		t.Errorf("All() = %v, want messages.Topics.All() %v", got, want)
	}
	if d.Requests() != topics.Requests || d.Results() != topics.Results {
		t.Errorf("ends = %s, %s", d.Requests(), d.Results())
	}
	if got := d.Names(); !slices.Equal(got, []string{"retrieval", "enrichment"}) {
		t.Errorf("Names() = %v", got)
	}
	if got := d.Groups(); !slices.Equal(got, []string{"retrieval", "enrichment"}) {
		t.Errorf("Groups() = %v", got)
	}
	if got := d.Inputs(); !slices.Equal(got, []string{topics.Requests, topics.Candidates}) {
		t.Errorf("Inputs() = %v", got)
	}
}

func TestInsertSplicesAStageIntoTheChain(t *testing.T) {
	d := topology.Default(messages.DefaultTopics())
	before := slices.Clone(d.Stages)
	got, err := d.Insert("retrieval", topology.Stage{Name: "rerank", Output: "retrieval.reranked"})
	if err != nil {
		t.Fatal(err)
	}
	want := []topology.Stage{
		{Name: "retrieval", Group: "retrieval", Input: "retrieval.requests", Output: "retrieval.candidates"},
		{Name: "rerank", Group: "rerank", Input: "retrieval.candidates", Output: "retrieval.reranked"},
		{Name: "enrichment", Group: "enrichment", Input: "retrieval.reranked", Output: "retrieval.results"},
	}
	if !slices.Equal(got.Stages, want) {
		t.Errorf("Insert = %+v\nwant %+v", got.Stages, want)
	}
	if !slices.Equal(d.Stages, before) {
		t.Errorf("Insert changed its receiver: %+v", d.Stages)
	}
	// After the last stage: the new stage writes the results.
	last, err := d.Insert("enrichment", topology.Stage{Name: "audit", Output: "retrieval.audited"})
	if err != nil {
		t.Fatal(err)
	}
	if last.Results() != "retrieval.audited" || last.Stages[2].Input != "retrieval.results" {
		t.Errorf("Insert after the last stage = %+v", last.Stages)
	}
	if _, err := d.Insert("nope", topology.Stage{Name: "x", Output: "x"}); err == nil || !strings.Contains(err.Error(), `no stage "nope"`) {
		t.Errorf("Insert after a missing stage: %v", err)
	}
}

func TestValidateRejects(t *testing.T) {
	ok := func() topology.Topology { return topology.Default(messages.DefaultTopics()) }
	many := topology.Topology{}
	for i := range topology.MaxStages + 1 {
		in, out := "t"+strings.Repeat("a", i), "t"+strings.Repeat("a", i+1)
		many.Stages = append(many.Stages, topology.Stage{Name: "s" + strings.Repeat("a", i), Group: "g" + in, Input: in, Output: out})
	}
	for _, tc := range []struct {
		name string
		edit func(*topology.Topology)
		want string
	}{
		{"empty", func(t *topology.Topology) { t.Stages = nil }, "no stages"},
		{"too many", func(t *topology.Topology) { *t = many }, "at most 16"},
		{"empty name", func(t *topology.Topology) { t.Stages[1].Name = "" }, "must be 1 to 32 bytes"},
		{"long name", func(t *topology.Topology) { t.Stages[1].Name = strings.Repeat("a", 33) }, "must be 1 to 32 bytes"},
		{"upper-case name", func(t *topology.Topology) { t.Stages[1].Name = "Enrich" }, "lower-case"},
		{"name starting with a digit", func(t *topology.Topology) { t.Stages[1].Name = "2nd" }, "starting with a letter"},
		{"duplicate name", func(t *topology.Topology) { t.Stages[1].Name = "retrieval" }, "used twice"},
		{"no group", func(t *topology.Topology) { t.Stages[0].Group = "" }, "no consumer group"},
		{"shared group", func(t *topology.Topology) { t.Stages[1].Group = "retrieval" }, "used by another stage"},
		{"broken chain", func(t *topology.Topology) { t.Stages[1].Input = "elsewhere" }, "must be the previous stage's output"},
		{"illegal topic", func(t *topology.Topology) { t.Stages[1].Output = "a b" }, "enrichment output topic"},
		{"colliding topics", func(t *topology.Topology) { t.Stages[1].Output = "retrieval_candidates" }, "collide"},
		{"loop", func(t *topology.Topology) { t.Stages[1].Output = t.Stages[0].Input }, "are both"},
		{"dead-letter suffix", func(t *topology.Topology) { t.Stages[1].Output = "x.dlq" }, "ends with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := ok()
			tc.edit(&top)
			err := top.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestEmptyTopologyHasNoTopics(t *testing.T) {
	var e topology.Topology
	if e.Requests() != "" || e.Results() != "" || len(e.Topics()) != 0 || len(e.All()) != 0 {
		t.Errorf("empty topology: %q %q %v %v", e.Requests(), e.Results(), e.Topics(), e.All())
	}
	if _, ok := e.Stage("retrieval"); ok {
		t.Error("Stage found in an empty topology")
	}
}

func TestDocumentsTopicIsPartOfTheTopology(t *testing.T) {
	d := topology.Default(messages.Topics{Requests: "a", Candidates: "b", Results: "c"})
	if d.Documents != messages.DefaultDocumentsTopic {
		t.Errorf("Documents = %q, want the default %q", d.Documents, messages.DefaultDocumentsTopic)
	}
	ins, err := d.Insert("retrieval", topology.Stage{Name: "rerank", Output: "r"})
	if err != nil || ins.Documents != d.Documents {
		t.Errorf("Insert: documents %q, err %v", ins.Documents, err)
	}
	d.Documents = "b"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "documents") {
		t.Errorf("documents topic equal to a stage's: Validate() = %v", err)
	}
	d.Documents = ""
	if err := d.Validate(); err != nil || slices.Contains(d.All(), messages.DLQTopic("")) || len(d.All()) != 6 {
		t.Errorf("no documents topic: Validate() = %v, All() = %v", err, d.All())
	}
}
