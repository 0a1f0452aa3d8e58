package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/ops/spans"
)

// TestRunSpansFollowOtherToolsConventions: a whole `kretrieve run` (its
// embedded broker, the start-up check, the workers) records the cluster id
// the check learned from the broker as messaging.kafka.cluster.id on every
// Kafka span, and its search spans as GenAI retrievals.
func TestRunSpansFollowOtherToolsConventions(t *testing.T) {
	spansFile := filepath.Join(t.TempDir(), "spans.jsonl")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"run", "--requests", "3", "--spans-file", spansFile, "--spans-file-requests", "3",
		"--log-level", "warn", "--index", testIndex(t)}, mapEnv(nil), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(spansFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read, err := spans.ReadSpans(f)
	if err != nil {
		t.Fatal(err)
	}
	kafkaSpans, searches := 0, 0
	for _, s := range read {
		if _, ok := s.Attr("messaging.destination.name"); ok && !strings.HasPrefix(s.Name, "replay ") {
			kafkaSpans++
			// The embedded broker is kfake, whose metadata reports "kfake".
			if id, _ := s.Attr("messaging.kafka.cluster.id"); id != "kfake" {
				t.Errorf("span %s: messaging.kafka.cluster.id = %v, want kfake", s.Name, id)
			}
		}
		if s.Name == "search" {
			searches++
			op, _ := s.Attr("gen_ai.operation.name")
			src, _ := s.Attr("gen_ai.data_source.id")
			index, _ := s.Attr("kretrieve.index.name")
			if topK, _ := s.Attr("gen_ai.retrieval.top_k"); op != "retrieval" || src == nil || src != index || topK == nil {
				t.Errorf("search span: gen_ai.operation.name %v, gen_ai.data_source.id %v (index %v), gen_ai.retrieval.top_k %v", op, src, index, topK)
			}
			if _, ok := s.Attr("gen_ai.retrieval.documents"); ok {
				t.Error("search span records the documents without --record-retrieval-documents")
			}
		}
	}
	if kafkaSpans != 3*9 || searches != 3 {
		t.Fatalf("%d Kafka spans and %d search spans, want 27 and 3", kafkaSpans, searches)
	}
}
