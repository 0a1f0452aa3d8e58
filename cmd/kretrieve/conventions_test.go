// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/ops/spans"
)

// TestRunSpansFollowOtherToolsConventions: a whole `kretrieve run` (its
// embedded broker, the start-up check, the workers) records the cluster id
// the check learned from the broker as messaging.kafka.cluster.id on every
// Kafka span, and its search spans as GenAI retrievals, with the documents
// found only under --record-retrieval-documents (in the spans file as the
// JSON text of the id/score maps).
func TestRunSpansFollowOtherToolsConventions(t *testing.T) {
	for _, record := range []bool{false, true} {
		args := []string{"run", "--requests", "3", "--log-level", "warn", "--index", testIndex(t)}
		if record {
			args = append(args, "--record-retrieval-documents")
		}
		kafkaSpans, searches := 0, 0
		for _, s := range runSpans(t, args) {
			if _, ok := s.Attr("messaging.destination.name"); ok {
				kafkaSpans++
				// The embedded broker is kfake, whose metadata reports "kfake".
				if id, _ := s.Attr("messaging.kafka.cluster.id"); id != "kfake" {
					t.Errorf("span %s: messaging.kafka.cluster.id = %v, want kfake", s.Name, id)
				}
			}
			if s.Name == "search" {
				searches++
				checkRetrievalSpan(t, s, record)
			}
		}
		if kafkaSpans != 3*9 || searches != 3 {
			t.Fatalf("%d Kafka spans and %d search spans, want 27 and 3", kafkaSpans, searches)
		}
	}
}

// runSpans runs kretrieve with args and --spans-file, and returns the spans
// of the file.
func runSpans(t *testing.T, args []string) []spans.Span {
	t.Helper()
	spansFile := filepath.Join(t.TempDir(), "spans.jsonl")
	var stdout, stderr bytes.Buffer
	args = append(args, "--spans-file", spansFile, "--spans-file-requests", "100")
	if err := run(t.Context(), args, mapEnv(nil), &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	read := readSpans(t, spansFile)
	return read
}

// checkRetrievalSpan checks a search span's GenAI retrieval attributes, and
// that it has gen_ai.retrieval.documents, well formed, just when record.
func checkRetrievalSpan(t *testing.T, s spans.Span, record bool) {
	t.Helper()
	op, _ := s.Attr("gen_ai.operation.name")
	src, _ := s.Attr("gen_ai.data_source.id")
	index, _ := s.Attr("kretrieve.index.name")
	if topK, _ := s.Attr("gen_ai.retrieval.top_k"); op != "retrieval" || src == nil || src != index || topK == nil {
		t.Errorf("search span: gen_ai.operation.name %v, gen_ai.data_source.id %v (index %v), gen_ai.retrieval.top_k %v", op, src, index, topK)
	}
	v, ok := s.Attr("gen_ai.retrieval.documents")
	if ok != record {
		t.Fatalf("record %v: gen_ai.retrieval.documents = %v", record, v)
	}
	if !record {
		return
	}
	var docs []struct {
		ID    string   `json:"id"`
		Score *float64 `json:"score"`
	}
	text, _ := v.(string)
	if err := json.Unmarshal([]byte(text), &docs); err != nil || len(docs) == 0 {
		t.Fatalf("gen_ai.retrieval.documents %q: %v", text, err)
	}
	for _, d := range docs {
		if d.ID == "" || strings.TrimSpace(d.ID) != d.ID || d.Score == nil {
			t.Errorf("document %+v in %s: want an id and a score", d, text)
		}
	}
}
