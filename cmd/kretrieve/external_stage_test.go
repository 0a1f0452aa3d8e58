// SPDX-License-Identifier: Apache-2.0

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// TestExternalStageFlag: --external-stage NAME:OUTPUT puts an external
// stage after the first one in the binary's table (the topics it creates,
// the collector's dead-letter topics, the groups), and a malformed value
// is refused with a message naming the flag and its form.
func TestExternalStageFlag(t *testing.T) {
	c := commonConfig{topics: messages.DefaultTopics(), partitions: 1, replicationFactor: 1, externalStage: "rescore:retrieval.rescored"}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	top := c.topology()
	if got, want := top.Topics(), []string{"retrieval.requests", "retrieval.candidates", "retrieval.rescored", "retrieval.results"}; !slices.Equal(got, want) {
		t.Errorf("topics %v, want %v", got, want)
	}
	if got, want := top.Groups(), []string{"retrieval", "rescore", "enrichment"}; !slices.Equal(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	stages, err := c.stages()
	if err != nil {
		t.Fatal(err)
	}
	if !stages[1].External || stages[1].NewHandler != nil || stages[2].Input != "retrieval.rescored" {
		t.Errorf("stage table: %+v", top.Stages)
	}
	for _, bad := range []string{"rescore", ":retrieval.rescored", "rescore:", "Rescore:retrieval.rescored", "rescore:retrieval.results"} {
		c.externalStage = bad
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), "external-stage") {
			t.Errorf("--external-stage %q: err %v, want one naming the flag", bad, err)
		}
	}
}
