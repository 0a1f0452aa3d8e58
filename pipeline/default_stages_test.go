// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"slices"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/topology"
)

// TestDefaultStagesOfZeroTopics: zero topics mean the default ones, the
// stages of a zero Config, which names its topics through its stages only.
func TestDefaultStagesOfZeroTopics(t *testing.T) {
	want := topology.Default(messages.DefaultTopics())
	if got := (pipeline.Config{}).Topology(); !slices.Equal(got.Stages, want.Stages) {
		t.Fatalf("zero Config's topology %+v, want %+v", got, want)
	}
	got := pipeline.Config{Stages: pipeline.DefaultStages(messages.Topics{})}.Topology()
	if !slices.Equal(got.Stages, want.Stages) {
		t.Fatalf("DefaultStages(zero) topology %+v, want %+v", got, want)
	}
	other := messages.Topics{Requests: "a", Candidates: "b", Results: "c"}
	if got := (pipeline.Config{Stages: pipeline.DefaultStages(other)}).Topology(); !slices.Equal(got.Topics(), []string{"a", "b", "c"}) {
		t.Fatalf("topics %v, want a, b, c", got.Topics())
	}
}
