// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// payloadCase is a candidates or result record value and the verdict its
// decoder must reach. schema_test.go checks the same tables against the
// JSON Schemas.
type payloadCase struct {
	name          string
	body          string
	kind          string // valid, decodeErr or invalidErr
	field         string // ValidationError.Field for invalidErr
	schemaDiffers string // why JSON Schema cannot agree; excludes the case
}

func candidatesCases() []payloadCase {
	const head = `"request_id":"r","query":"q"`
	tooMany := `[` + strings.TrimSuffix(strings.Repeat(`{"doc_id":"d","score":1},`, 3), ",") + `]`
	cases := []payloadCase{
		{name: "minimal", body: `{` + head + `,"top_k":1,"candidates":[]}`},
		{name: "full v1", body: `{"schema_version":1,` + head + `,"top_k":2,"candidates":[{"doc_id":"a","score":2.5},{"doc_id":"b","score":-1e-3}],"timings":{"retrieval_queue_ms":-3,"retrieval_ms":1.5}}`},
		{name: "full v2", body: `{"schema_version":2,` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":2.5}],"timings":{"stages":[{"stage":"retrieval","queue_ms":-3,"work_ms":1.5}],"retrieval_queue_ms":-3,"retrieval_ms":1.5}}`},
		{name: "unknown fields ignored", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":1,"rank":1}],"shard":3}`},
		{name: "timings null", body: `{` + head + `,"top_k":1,"candidates":[],"timings":null}`},
		{name: "timings member null", body: `{` + head + `,"top_k":1,"candidates":[],"timings":{"retrieval_ms":null}}`},

		{name: "not an object", body: `[]`, kind: decodeErr},
		{name: "trailing garbage", body: `{` + head + `,"top_k":1,"candidates":[]}]`, kind: decodeErr},
		{name: "schema_version 3", body: `{"schema_version":3,` + head + `,"top_k":1,"candidates":[]}`, kind: invalidErr, field: "schema_version"},
		{name: "request_id missing", body: `{"query":"q","top_k":1,"candidates":[]}`, kind: invalidErr, field: "request_id"},
		{name: "request_id empty", body: `{"request_id":"","query":"q","top_k":1,"candidates":[]}`, kind: invalidErr, field: "request_id"},
		{name: "request_id trailing space", body: `{"request_id":"r ","query":"q","top_k":1,"candidates":[]}`, kind: invalidErr, field: "request_id"},
		{name: "query whitespace only", body: `{"request_id":"r","query":"\t","top_k":1,"candidates":[]}`, kind: invalidErr, field: "query"},
		{name: "query invalid utf-8", body: "{\"request_id\":\"r\",\"query\":\"\xc3\",\"top_k\":1,\"candidates\":[]}", kind: invalidErr, field: "query",
			schemaDiffers: "encoding/json replaces invalid UTF-8 before JSON Schema sees the string"},
		{name: "top_k missing", body: `{` + head + `,"candidates":[]}`, kind: invalidErr, field: "top_k"},
		{name: "top_k 0", body: `{` + head + `,"top_k":0,"candidates":[]}`, kind: invalidErr, field: "top_k"},
		{name: "top_k 101", body: `{` + head + `,"top_k":101,"candidates":[]}`, kind: invalidErr, field: "top_k"},
		{name: "candidates missing", body: `{` + head + `,"top_k":1}`, kind: invalidErr, field: "candidates"},
		{name: "candidates null", body: `{` + head + `,"top_k":1,"candidates":null}`, kind: invalidErr, field: "candidates"},
		{name: "candidates object", body: `{` + head + `,"top_k":1,"candidates":{}}`, kind: invalidErr, field: "candidates"},
		{name: "more candidates than top_k", body: `{` + head + `,"top_k":2,"candidates":` + tooMany + `}`, kind: invalidErr, field: "candidates",
			schemaDiffers: "JSON Schema cannot compare an array's length with another member's value"},
		{name: "candidate null", body: `{` + head + `,"top_k":2,"candidates":[{"doc_id":"a","score":1},null]}`, kind: invalidErr, field: "candidates[1]"},
		{name: "candidate number", body: `{` + head + `,"top_k":1,"candidates":[5]}`, kind: invalidErr, field: "candidates[0]"},
		{name: "doc_id missing", body: `{` + head + `,"top_k":1,"candidates":[{"score":1}]}`, kind: invalidErr, field: "candidates[0].doc_id"},
		{name: "doc_id empty", body: `{` + head + `,"top_k":2,"candidates":[{"doc_id":"a","score":1},{"doc_id":"","score":1}]}`, kind: invalidErr, field: "candidates[1].doc_id"},
		{name: "doc_id number", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":1,"score":1}]}`, kind: invalidErr, field: "candidates[0].doc_id"},
		{name: "score missing", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a"}]}`, kind: invalidErr, field: "candidates[0].score"},
		{name: "score string", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":"1"}]}`, kind: invalidErr, field: "candidates[0].score"},
		{name: "score beyond float64", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":-1e309}]}`, kind: invalidErr, field: "candidates[0].score"},
		{name: "timings array", body: `{` + head + `,"top_k":1,"candidates":[],"timings":[]}`, kind: invalidErr, field: "timings"},
		{name: "timings member string", body: `{` + head + `,"top_k":1,"candidates":[],"timings":{"enrichment_ms":"1"}}`, kind: invalidErr, field: "timings.enrichment_ms"},
		{name: "timings member beyond float64", body: `{` + head + `,"top_k":1,"candidates":[],"timings":{"retrieval_ms":2e308}}`, kind: invalidErr, field: "timings.retrieval_ms"},

		{name: "version", body: `{` + head + `,"top_k":2,"candidates":[{"doc_id":"a","score":1,"version":"6f1d2c9a8b7e4f3a2d1c0b9a8e7f6d5c"},{"doc_id":"b","score":1,"version":null}]}`},
		{name: "version empty", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":1,"version":""}]}`},
		{name: "version at the limit", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":1,"version":"` + strings.Repeat("f", messages.MaxVersionBytes) + `"}]}`},
		{name: "version over the limit", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":1,"version":"` + strings.Repeat("f", messages.MaxVersionBytes+1) + `"}]}`, kind: invalidErr, field: "candidates[0].version"},
		{name: "version slash", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":1,"version":"v/1"}]}`, kind: invalidErr, field: "candidates[0].version"},
		{name: "version number", body: `{` + head + `,"top_k":1,"candidates":[{"doc_id":"a","score":1,"version":1}]}`, kind: invalidErr, field: "candidates[0].version"},
	}
	for _, tc := range timingsCases() {
		tc.body = `{` + head + `,"top_k":1,"candidates":[],"timings":` + tc.body + `}`
		cases = append(cases, tc)
	}
	for _, tc := range freshnessCases() {
		tc.body = `{` + head + `,"top_k":1,"candidates":[],"index_freshness":` + tc.body + `}`
		cases = append(cases, tc)
	}
	return cases
}

func TestDecodeCandidates(t *testing.T) {
	for _, tc := range candidatesCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := messages.DecodeCandidates([]byte(tc.body))
			checkErr(t, err, tc.kind, messages.PayloadCandidates, tc.field)
			if tc.kind != valid {
				if !reflect.DeepEqual(got, messages.Candidates{}) {
					t.Errorf("got %+v with an error, want the zero value", got)
				}
				return
			}
			if got.SchemaVersion != messages.SchemaVersion || got.Candidates == nil {
				t.Errorf("got SchemaVersion %d, Candidates %#v", got.SchemaVersion, got.Candidates)
			}
		})
	}
}

func TestDecodeCandidatesValues(t *testing.T) {
	body := `{"request_id":"r","query":"q","top_k":2,"candidates":[{"doc_id":"a","score":2.5},{"doc_id":"b","score":-1e-3}],"timings":{"retrieval_queue_ms":-3,"retrieval_ms":1.5}}`
	got, err := messages.DecodeCandidates([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := messages.Candidates{
		SchemaVersion: messages.SchemaVersion, RequestID: "r", Query: "q", TopK: 2,
		Candidates: []messages.Candidate{{DocID: "a", Score: 2.5}, {DocID: "b", Score: -0.001}},
		Timings:    messages.Timings{Stages: []messages.StageTiming{{Stage: messages.StageRetrieval, QueueMS: -3, WorkMS: 1.5}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestCandidatesRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   messages.Candidates
	}{
		{name: "nil candidates", in: messages.Candidates{RequestID: "r", Query: "q", TopK: 10}},
		{name: "empty candidates", in: messages.Candidates{RequestID: "r", Query: "q", TopK: 10, Candidates: []messages.Candidate{}}},
		{name: "full", in: messages.Candidates{
			SchemaVersion: 1, RequestID: "01JDQ3Z7W8X2K4M6N8P0R2T4V6", Query: "exactly-once ünïcode", TopK: 3,
			Candidates: []messages.Candidate{{DocID: "a", Score: 12.5}, {DocID: "b/2", Score: 0.1 + 0.2}, {DocID: "c", Score: -math.MaxFloat64}},
			Timings: messages.Timings{Stages: []messages.StageTiming{
				{Stage: messages.StageRetrieval, QueueMS: -1.25, WorkMS: 18.4},
				{Stage: "rerank", QueueMS: math.SmallestNonzeroFloat64, WorkMS: -0.5},
				{Stage: messages.StageEnrichment, QueueMS: -math.MaxFloat64, WorkMS: 1e9},
			}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := messages.EncodeCandidates(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.in.Candidates) == 0 && !strings.Contains(string(b), `"candidates":[]`) {
				t.Errorf("empty candidates not encoded as []: %s", b)
			}
			got, err := messages.DecodeCandidates(b)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.in
			want.SchemaVersion = messages.SchemaVersion
			if want.Candidates == nil {
				want.Candidates = []messages.Candidate{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestEncodeCandidatesRejects(t *testing.T) {
	ok := func() messages.Candidates {
		return messages.Candidates{RequestID: "r", Query: "q", TopK: 2, Candidates: []messages.Candidate{{DocID: "a", Score: 1}}}
	}
	tests := []struct {
		name  string
		edit  func(*messages.Candidates)
		field string
	}{
		{name: "NaN score", edit: func(c *messages.Candidates) { c.Candidates[0].Score = math.NaN() }, field: "candidates[0].score"},
		{name: "Inf score", edit: func(c *messages.Candidates) { c.Candidates[0].Score = math.Inf(1) }, field: "candidates[0].score"},
		{name: "empty doc_id", edit: func(c *messages.Candidates) { c.Candidates[0].DocID = "" }, field: "candidates[0].doc_id"},
		{name: "NaN timing", edit: func(c *messages.Candidates) {
			c.Timings = stages("retrieval", "rerank")
			c.Timings.Stages[1].WorkMS = math.NaN()
		}, field: "timings.stages[1].work_ms"},
		{name: "-Inf timing", edit: func(c *messages.Candidates) {
			c.Timings = stages("a", "b", "c")
			c.Timings.Stages[2].QueueMS = math.Inf(-1)
		}, field: "timings.stages[2].queue_ms"},
		{name: "empty stage name", edit: func(c *messages.Candidates) { c.Timings = stages("") }, field: "timings.stages[0].stage"},
		{name: "duplicate stage", edit: func(c *messages.Candidates) { c.Timings = stages("retrieval", "rerank", "retrieval") }, field: "timings.stages[2].stage"},
		{name: "too many stages", edit: func(c *messages.Candidates) { c.Timings = manyStages(messages.MaxStages + 1) }, field: "timings.stages"},
		{name: "more than top_k", edit: func(c *messages.Candidates) { c.TopK = 1; c.Candidates = append(c.Candidates, c.Candidates[0]) }, field: "candidates"},
		{name: "missing request_id", edit: func(c *messages.Candidates) { c.RequestID = "" }, field: "request_id"},
		{name: "missing query", edit: func(c *messages.Candidates) { c.Query = "" }, field: "query"},
		{name: "top_k 0", edit: func(c *messages.Candidates) { c.TopK = 0 }, field: "top_k"},
		{name: "future version", edit: func(c *messages.Candidates) { c.SchemaVersion = 3 }, field: "schema_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok()
			tt.edit(&c)
			b, err := messages.EncodeCandidates(c)
			checkErr(t, err, invalidErr, messages.PayloadCandidates, tt.field)
			if b != nil {
				t.Errorf("got output %s with an error", b)
			}
		})
	}
}
