// SPDX-License-Identifier: Apache-2.0

package retrieval_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/consumers/retrieval"
	"github.com/kretrieve/kretrieve/search"
)

// spanAttrs returns span's attributes by key.
func spanAttrs(span sdktrace.ReadOnlySpan) map[string]attribute.Value {
	got := map[string]attribute.Value{}
	for _, kv := range span.Attributes() {
		got[string(kv.Key)] = kv.Value
	}
	return got
}

// TestSearchSpanCarriesGenAIRetrievalAttributes: the search span is a GenAI
// retrieval span (gen_ai.operation.name=retrieval, the index as
// gen_ai.data_source.id, gen_ai.retrieval.top_k), set when the span starts
// so that samplers see them. The documents found are recorded only when
// asked for (Config.RecordDocuments), as structured id/score maps, best
// first; otherwise no document id reaches the span.
func TestSearchSpanCarriesGenAIRetrievalAttributes(t *testing.T) {
	ix := smallIndex(t)
	for _, record := range []bool{false, true} {
		outs, rec, err := handleWith(t.Context(), ix, retrieval.Config{RecordDocuments: record},
			`{"query":"gzip compressed query","top_k":5}`)
		if err != nil || len(outs) != 1 {
			t.Fatalf("record %v: outs %v err %v", record, outs, err)
		}
		span := rec.Ended()[0]
		got := spanAttrs(span)
		if got["gen_ai.operation.name"].AsString() != "retrieval" || got["gen_ai.data_source.id"].AsString() != "small" ||
			got["gen_ai.retrieval.top_k"].Type() != attribute.INT64 || got["gen_ai.retrieval.top_k"].AsInt64() != 5 {
			t.Fatalf("record %v: span %s attributes %v", record, span.Name(), got)
		}
		// The kretrieve.* keys stay, and the span keeps its name.
		if span.Name() != "search" || got["kretrieve.index.name"].AsString() != "small" || got["kretrieve.search.top_k"].AsInt64() != 5 {
			t.Fatalf("record %v: span %s attributes %v", record, span.Name(), got)
		}
		docs, has := got["gen_ai.retrieval.documents"]
		if has != record {
			t.Fatalf("record %v: gen_ai.retrieval.documents present %v", record, has)
		}
		if !record {
			for k, v := range got {
				if strings.Contains(v.String(), "gzip") || strings.Contains(v.String(), "net/url") {
					t.Errorf("not recording documents, %s = %s names a document or the query", k, v.String())
				}
			}
			continue
		}
		assertDocuments(t, docs, got["kretrieve.search.hits"].AsInt64())
	}
}

// assertDocuments checks a gen_ai.retrieval.documents value: n maps, each
// with a string id and a double score, scores not increasing, the best
// being the gzip package the query names.
func assertDocuments(t *testing.T, docs attribute.Value, n int64) {
	t.Helper()
	if docs.Type() != attribute.SLICE || int64(len(docs.AsSlice())) != n || n == 0 {
		t.Fatalf("gen_ai.retrieval.documents = %s (%s), want %d maps", docs.String(), docs.Type(), n)
	}
	prev := 0.0
	for i, d := range docs.AsSlice() {
		if d.Type() != attribute.MAP {
			t.Fatalf("document %d is %s, want a map", i, d.Type())
		}
		fields := map[string]attribute.Value{}
		for _, kv := range d.AsMap() {
			fields[string(kv.Key)] = kv.Value
		}
		id, score := fields["id"], fields["score"]
		if len(fields) != 2 || id.Type() != attribute.STRING || score.Type() != attribute.FLOAT64 || score.AsFloat64() <= 0 {
			t.Fatalf("document %d = %s, want an id string and a positive score double", i, d.String())
		}
		if i == 0 && id.AsString() != "compress/gzip" {
			t.Errorf("best document %q, want compress/gzip", id.AsString())
		}
		if i > 0 && score.AsFloat64() > prev {
			t.Errorf("document %d scores %v after %v: not best first", i, score.AsFloat64(), prev)
		}
		prev = score.AsFloat64()
	}
}

// TestSearchSpanErrorType: a failed search span carries error.type, a
// low-cardinality identifier of the failure, as the GenAI conventions ask.
func TestSearchSpanErrorType(t *testing.T) {
	for want, s := range map[string]retrieval.Searcher{
		"timeout":       stuckSearcher{},
		"invalid_query": fakeSearcher{err: search.ErrInvalidQuery},
		"_OTHER":        fakeSearcher{err: errors.New("index busy")},
	} {
		_, rec, err := handleWith(t.Context(), s, retrieval.Config{SearchTimeout: time.Millisecond}, `{"query":"q"}`)
		if err == nil {
			t.Fatalf("%s: no error", want)
		}
		if got := spanAttrs(rec.Ended()[0])["error.type"].AsString(); got != want {
			t.Errorf("error.type %q, want %q", got, want)
		}
	}
}
