// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestSearchSpanRecordsDocumentsOnlyWhenAsked: through the whole pipeline,
// the retrieval worker's search span is a GenAI retrieval span, and with
// RecordDocuments (--record-retrieval-documents) it lists the documents
// retrieval found, among them every document the request's answer returns,
// with the positive score retrieval gave it; without, it has none.
func TestSearchSpanRecordsDocumentsOnlyWhenAsked(t *testing.T) {
	for _, record := range []bool{false, true} {
		h := newHarness(t, 2)
		h.cfg.RecordDocuments = record
		h.startWorkers()
		out := sendAndWait(t, h.client(true), []string{"compress data with gzip"})[0]
		if len(out.Result.Documents) == 0 {
			t.Fatalf("record %v: no documents answered", record)
		}
		var docs []attribute.Value
		searches := 0
		for _, s := range h.spans.Ended() {
			if s.Name() != "search" {
				continue
			}
			searches++
			for _, kv := range s.Attributes() {
				switch kv.Key {
				case "gen_ai.operation.name":
					if kv.Value.AsString() != "retrieval" {
						t.Errorf("gen_ai.operation.name %q", kv.Value.AsString())
					}
				case "gen_ai.retrieval.documents":
					docs = kv.Value.AsSlice()
				}
			}
		}
		if searches != 1 || (docs != nil) != record {
			t.Fatalf("record %v: %d search spans, documents %v", record, searches, docs)
		}
		scores := map[string]float64{}
		for _, d := range docs {
			m := attribute.NewSet(d.AsMap()...)
			id, _ := m.Value("id")
			score, _ := m.Value("score")
			scores[id.AsString()] = score.AsFloat64()
		}
		for _, d := range out.Result.Documents {
			// The answer's scores are enrichment's (normalised after the
			// rerank); the span has retrieval's BM25 scores.
			if score, ok := scores[d.ID]; record && (!ok || score <= 0) {
				t.Errorf("answered %s: on the search span %v, score %v", d.ID, ok, score)
			}
		}
	}
}
