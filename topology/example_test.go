// SPDX-License-Identifier: Apache-2.0

package topology_test

import (
	"fmt"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/topology"
)

// A re-ranking stage between retrieval and enrichment: one Insert, and
// every topic, group and dead-letter topic follows.
func ExampleTopology_Insert() {
	t, err := topology.Default(messages.DefaultTopics()).
		Insert(messages.StageRetrieval, topology.Stage{Name: "rerank", Output: "retrieval.reranked"})
	if err != nil {
		panic(err)
	}
	for _, s := range t.Stages {
		fmt.Printf("%-10s group %-10s %s -> %s\n", s.Name, s.Group, s.Input, s.Output)
	}
	fmt.Println(t.DeadLetterTopics())
	// Output:
	// retrieval  group retrieval  retrieval.requests -> retrieval.candidates
	// rerank     group rerank     retrieval.candidates -> retrieval.reranked
	// enrichment group enrichment retrieval.reranked -> retrieval.results
	// [retrieval.requests.dlq retrieval.candidates.dlq retrieval.reranked.dlq retrieval.results.dlq]
}
