// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

func resultCases() []payloadCase {
	doc := `{"id":"d","title":"t","score":1,"snippet":"s"}`
	docs := func(n int) string { return `[` + strings.TrimSuffix(strings.Repeat(doc+",", n), ",") + `]` }
	cases := []payloadCase{
		{name: "minimal", body: `{"request_id":"r","documents":[]}`},
		{name: "full v1", body: `{"schema_version":1,"request_id":"r","documents":[{"id":"d","title":"","score":-2,"snippet":"","url":"https://x.example/d","source":"wiki"}],"timings":{"retrieval_queue_ms":1,"retrieval_ms":2,"enrichment_queue_ms":3,"enrichment_ms":4}}`},
		{name: "full v2", body: `{"schema_version":2,"request_id":"r","documents":[{"id":"d","title":"","score":-2,"snippet":""}],"timings":{"stages":[{"stage":"retrieval","queue_ms":1,"work_ms":2},{"stage":"rerank","queue_ms":0.5,"work_ms":0.25},{"stage":"enrichment","queue_ms":3,"work_ms":4}],"retrieval_queue_ms":1,"retrieval_ms":2,"enrichment_queue_ms":3,"enrichment_ms":4}}`},
		{name: "100 documents", body: `{"request_id":"r","documents":` + docs(100) + `}`},
		{name: "url and source null", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","url":null,"source":null}]}`},
		{name: "unknown fields ignored", body: `{"request_id":"r","documents":[],"cache":"hit","Documents":5}`},

		{name: "not an object", body: `"r"`, kind: decodeErr},
		{name: "empty", body: ``, kind: decodeErr},
		{name: "schema_version 3", body: `{"schema_version":3,"request_id":"r","documents":[]}`, kind: invalidErr, field: "schema_version"},
		{name: "request_id missing", body: `{"documents":[]}`, kind: invalidErr, field: "request_id"},
		{name: "request_id 129 characters", body: `{"request_id":"` + strings.Repeat("r", 129) + `","documents":[]}`, kind: invalidErr, field: "request_id"},
		{name: "documents missing", body: `{"request_id":"r"}`, kind: invalidErr, field: "documents"},
		{name: "101 documents", body: `{"request_id":"r","documents":` + docs(101) + `}`, kind: invalidErr, field: "documents"},
		{name: "document string", body: `{"request_id":"r","documents":["d"]}`, kind: invalidErr, field: "documents[0]"},
		{name: "id empty", body: `{"request_id":"r","documents":[` + doc + `,{"id":"","title":"t","score":1,"snippet":"s"}]}`, kind: invalidErr, field: "documents[1].id"},
		{name: "title missing", body: `{"request_id":"r","documents":[{"id":"d","score":1,"snippet":"s"}]}`, kind: invalidErr, field: "documents[0].title"},
		{name: "snippet missing", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1}]}`, kind: invalidErr, field: "documents[0].snippet"},
		{name: "score missing", body: `{"request_id":"r","documents":[{"id":"d","title":"t","snippet":"s"}]}`, kind: invalidErr, field: "documents[0].score"},
		{name: "score beyond float64", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1e999,"snippet":"s"}]}`, kind: invalidErr, field: "documents[0].score"},
		{name: "url number", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","url":1}]}`, kind: invalidErr, field: "documents[0].url"},
		{name: "title invalid utf-8", body: "{\"request_id\":\"r\",\"documents\":[{\"id\":\"d\",\"title\":\"\xff\",\"score\":1,\"snippet\":\"s\"}]}", kind: invalidErr, field: "documents[0].title",
			schemaDiffers: "encoding/json replaces invalid UTF-8 before JSON Schema sees the string"},
		{name: "timings string", body: `{"request_id":"r","documents":[],"timings":"1ms"}`, kind: invalidErr, field: "timings"},

		{name: "version and stale_score", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","version":"6f1d2c9a","stale_score":true}]}`},
		{name: "stale_score false without version", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","stale_score":false}]}`},
		{name: "stale_score null", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","version":null,"stale_score":null}]}`},
		{name: "stale_score without version", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","stale_score":true}]}`, kind: invalidErr, field: "documents[0].version"},
		{name: "stale_score with empty version", body: `{"request_id":"r","documents":[` + doc + `,{"id":"d","title":"t","score":1,"snippet":"s","version":"","stale_score":true}]}`, kind: invalidErr, field: "documents[1].version"},
		{name: "stale_score string", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","version":"v","stale_score":"true"}]}`, kind: invalidErr, field: "documents[0].stale_score"},
		{name: "stale_score number", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","version":"v","stale_score":1}]}`, kind: invalidErr, field: "documents[0].stale_score"},
		{name: "degraded", body: `{"request_id":"r","documents":[],"degraded":[{"stage":"enrichment","dropped":"snippets","reason":"deadline"}]}`},
		{name: "degraded null", body: `{"request_id":"r","documents":[],"degraded":null}`},
		{name: "degraded empty", body: `{"request_id":"r","documents":[],"degraded":[]}`},
		{name: "degraded not an array", body: `{"request_id":"r","documents":[],"degraded":"deadline"}`, kind: invalidErr, field: "degraded"},
		{name: "degraded reason missing", body: `{"request_id":"r","documents":[],"degraded":[{"stage":"enrichment","dropped":"snippets"}]}`, kind: invalidErr, field: "degraded[0].reason"},
		{name: "degraded dropped upper case", body: `{"request_id":"r","documents":[],"degraded":[{"stage":"enrichment","dropped":"Snippets","reason":"deadline"}]}`, kind: invalidErr, field: "degraded[0].dropped"},
		{name: "degraded stage illegal", body: `{"request_id":"r","documents":[],"degraded":[{"stage":"a b","dropped":"snippets","reason":"deadline"}]}`, kind: invalidErr, field: "degraded[0].stage"},
		{name: "degraded 17 entries", body: `{"request_id":"r","documents":[],"degraded":[` + strings.TrimSuffix(strings.Repeat(`{"stage":"e","dropped":"snippets","reason":"deadline"},`, 17), ",") + `]}`, kind: invalidErr, field: "degraded"},
		{name: "document version over the limit", body: `{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s","version":"` + strings.Repeat("0", messages.MaxVersionBytes+1) + `"}]}`, kind: invalidErr, field: "documents[0].version"},
	}
	for _, tc := range timingsCases() {
		tc.body = `{"request_id":"r","documents":[],"timings":` + tc.body + `}`
		cases = append(cases, tc)
	}
	for _, tc := range freshnessCases() {
		tc.body = `{"request_id":"r","documents":[],"index_freshness":` + tc.body + `}`
		cases = append(cases, tc)
	}
	return cases
}

func TestDecodeResult(t *testing.T) {
	for _, tc := range resultCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := messages.DecodeResult([]byte(tc.body))
			checkErr(t, err, tc.kind, messages.PayloadResult, tc.field)
			if tc.kind != valid {
				if !reflect.DeepEqual(got, messages.Result{}) {
					t.Errorf("got %+v with an error, want the zero value", got)
				}
				return
			}
			if got.SchemaVersion != messages.SchemaVersion || got.Documents == nil {
				t.Errorf("got SchemaVersion %d, Documents %#v", got.SchemaVersion, got.Documents)
			}
		})
	}
}

func TestResultRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   messages.Result
	}{
		{name: "nil documents", in: messages.Result{RequestID: "r"}},
		{name: "full", in: messages.Result{
			SchemaVersion: 1,
			RequestID:     "01JDQ3Z7W8X2K4M6N8P0R2T4V6",
			Documents: []messages.Document{
				{ID: "kip-98", Title: "KIP-98 <Exactly Once>", Score: 12.5, Snippet: "Idempotent \"producers\"\n& transactions", URL: "https://example.com/kip-98?a=1&b=2", Source: "wiki"},
				{ID: "d2", Score: -0.5},
			},
			Timings: messages.Timings{Stages: []messages.StageTiming{
				{Stage: messages.StageRetrieval, QueueMS: 3.1, WorkMS: 18.4},
				{Stage: messages.StageEnrichment, QueueMS: -1.2, WorkMS: 7.9},
			}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := messages.EncodeResult(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.in.Documents) == 0 && !strings.Contains(string(b), `"documents":[]`) {
				t.Errorf("empty documents not encoded as []: %s", b)
			}
			got, err := messages.DecodeResult(b)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.in
			want.SchemaVersion = messages.SchemaVersion
			if want.Documents == nil {
				want.Documents = []messages.Document{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestEncodeResultOmitsEmptyURLAndSource(t *testing.T) {
	b, err := messages.EncodeResult(messages.Result{RequestID: "r", Documents: []messages.Document{{ID: "d", Score: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":2,"request_id":"r","documents":[{"id":"d","title":"","score":1,"snippet":""}],"timings":{"stages":[]}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestEncodeResultRejects(t *testing.T) {
	tests := []struct {
		name  string
		in    messages.Result
		field string
	}{
		{name: "NaN score", in: messages.Result{RequestID: "r", Documents: []messages.Document{{ID: "d", Score: math.NaN()}}}, field: "documents[0].score"},
		{name: "Inf timing", in: messages.Result{RequestID: "r", Timings: messages.Timings{}.With(messages.StageTiming{Stage: messages.StageEnrichment, WorkMS: math.Inf(1)})}, field: "timings.stages[0].work_ms"},
		{name: "stage name too long", in: messages.Result{RequestID: "r", Timings: stages(strings.Repeat("s", messages.MaxStageNameBytes+1))}, field: "timings.stages[0].stage"},
		{name: "duplicate stage", in: messages.Result{RequestID: "r", Timings: stages("enrichment", "enrichment")}, field: "timings.stages[1].stage"},
		{name: "too many stages", in: messages.Result{RequestID: "r", Timings: manyStages(messages.MaxStages + 1)}, field: "timings.stages"},
		{name: "empty id", in: messages.Result{RequestID: "r", Documents: []messages.Document{{ID: "a"}, {}}}, field: "documents[1].id"},
		{name: "too many documents", in: messages.Result{RequestID: "r", Documents: make([]messages.Document, messages.MaxTopK+1)}, field: "documents"},
		{name: "missing request_id", in: messages.Result{}, field: "request_id"},
		{name: "negative version", in: messages.Result{SchemaVersion: -1, RequestID: "r"}, field: "schema_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := messages.EncodeResult(tt.in)
			checkErr(t, err, invalidErr, messages.PayloadResult, tt.field)
			if b != nil {
				t.Errorf("got output %s with an error", b)
			}
		})
	}
}

func TestResultDocumentMetadataRoundTrip(t *testing.T) {
	in := messages.Result{RequestID: "r", Documents: []messages.Document{{
		ID: "net/url.ParseQuery", Title: "net/url.ParseQuery", Score: 1, Snippet: "s",
		Kind: "func", ImportPath: "net/url", Metadata: map[string]string{"team": "search", "n": "1"},
	}}}
	b, err := messages.EncodeResult(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := messages.DecodeResult(b)
	if err != nil {
		t.Fatal(err)
	}
	d := out.Documents[0]
	if d.Kind != "func" || d.ImportPath != "net/url" || d.Metadata["team"] != "search" || d.Metadata["n"] != "1" || len(d.Metadata) != 2 {
		t.Fatalf("document %+v", d)
	}
	_, err = messages.DecodeResult([]byte(`{"request_id":"r","documents":[{"id":"a","title":"","score":1,"snippet":"","metadata":{"n":1}}]}`))
	var ve *messages.ValidationError
	if !errors.As(err, &ve) || ve.Field != "documents[0].metadata.n" {
		t.Fatalf("non-string metadata: %v", err)
	}
}
