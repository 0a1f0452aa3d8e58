// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// freshnessJSON returns an index_freshness array of n distinct entries.
func freshnessJSON(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"stage":"s` + strconv.Itoa(i) + `","position":` + strconv.Itoa(i) + `,"newest_document_age_ms":1.5}`
	}
	return `[` + strings.Join(items, ",") + `]`
}

// freshnessCases are index_freshness values, checked inside both
// candidates and result payloads (and against both schemas). Fields are
// full paths.
func freshnessCases() []payloadCase {
	const entry = `{"stage":"retrieval","position":8352,"newest_document_age_ms":1234.5}`
	return []payloadCase{
		{name: "freshness two stages", body: `[` + entry + `,{"stage":"enrichment","position":0,"newest_document_age_ms":-3}]`},
		{name: "freshness empty", body: `[]`},
		{name: "freshness null", body: `null`},
		{name: "freshness at the limit", body: freshnessJSON(messages.MaxStages)},
		{name: "freshness position written as 1e3", body: `[{"stage":"a","position":1e3,"newest_document_age_ms":0}]`},
		{name: "freshness unknown members ignored", body: `[{"stage":"a","position":1,"newest_document_age_ms":0,"partitions":3}]`},

		{name: "freshness object", body: `{}`, kind: invalidErr, field: "index_freshness"},
		{name: "freshness over the limit", body: freshnessJSON(messages.MaxStages + 1), kind: invalidErr, field: "index_freshness"},
		{name: "freshness entry null", body: `[` + entry + `,null]`, kind: invalidErr, field: "index_freshness[1]"},
		{name: "freshness stage missing", body: `[{"position":1,"newest_document_age_ms":0}]`, kind: invalidErr, field: "index_freshness[0].stage"},
		{name: "freshness stage space", body: `[{"stage":"re trieval","position":1,"newest_document_age_ms":0}]`, kind: invalidErr, field: "index_freshness[0].stage"},
		{name: "freshness stages duplicate", body: `[` + entry + `,` + entry + `]`, kind: invalidErr, field: "index_freshness[1].stage",
			schemaDiffers: "JSON Schema cannot require one member to be unique across array items"},
		{name: "freshness position negative", body: `[{"stage":"a","position":-1,"newest_document_age_ms":0}]`, kind: invalidErr, field: "index_freshness[0].position"},
		{name: "freshness position fractional", body: `[{"stage":"a","position":1.5,"newest_document_age_ms":0}]`, kind: invalidErr, field: "index_freshness[0].position"},
		{name: "freshness position string", body: `[{"stage":"a","position":"1","newest_document_age_ms":0}]`, kind: invalidErr, field: "index_freshness[0].position"},
		{name: "freshness position missing", body: `[{"stage":"a","newest_document_age_ms":0}]`, kind: invalidErr, field: "index_freshness[0].position"},
		{name: "freshness age missing", body: `[{"stage":"a","position":1}]`, kind: invalidErr, field: "index_freshness[0].newest_document_age_ms"},
		{name: "freshness age string", body: `[{"stage":"a","position":1,"newest_document_age_ms":"1"}]`, kind: invalidErr, field: "index_freshness[0].newest_document_age_ms"},
		{name: "freshness age beyond float64", body: `[{"stage":"a","position":1,"newest_document_age_ms":1e400}]`, kind: invalidErr, field: "index_freshness[0].newest_document_age_ms"},
	}
}

func TestIndexFreshnessWithAndStage(t *testing.T) {
	var f messages.IndexFreshness
	r := messages.StageFreshness{Stage: messages.StageRetrieval, Position: 10, NewestDocumentAgeMS: 5}
	f1 := f.With(r)
	e := messages.StageFreshness{Stage: messages.StageEnrichment, Position: 12, NewestDocumentAgeMS: 1}
	f2 := f1.With(e)
	if len(f) != 0 || len(f1) != 1 || !reflect.DeepEqual(f2, messages.IndexFreshness{r, e}) {
		t.Fatalf("f %v f1 %v f2 %v", f, f1, f2)
	}
	r2 := messages.StageFreshness{Stage: messages.StageRetrieval, Position: 11}
	f3 := f2.With(r2)
	if !reflect.DeepEqual(f3, messages.IndexFreshness{r2, e}) || f2[0] != r {
		t.Fatalf("replacing: f3 %v, f2 changed to %v", f3, f2)
	}
	if got, ok := f3.Stage(messages.StageEnrichment); !ok || got != e {
		t.Errorf("Stage(enrichment) = %+v, %v", got, ok)
	}
	if _, ok := f3.Stage("rerank"); ok {
		t.Error("Stage(rerank) found an entry")
	}
}

// TestVersionsAndFreshnessRoundTrip: versions, the stale marker and
// index_freshness survive encoding and decoding of both payloads.
func TestVersionsAndFreshnessRoundTrip(t *testing.T) {
	fresh := messages.IndexFreshness{
		{Stage: messages.StageRetrieval, Position: 8352, NewestDocumentAgeMS: 1234.5},
		{Stage: messages.StageEnrichment, Position: math.MaxInt64, NewestDocumentAgeMS: -0.25},
	}
	c := messages.Candidates{RequestID: "r", Query: "q", TopK: 2, IndexFreshness: fresh[:1],
		Candidates: []messages.Candidate{{DocID: "a", Score: 2, Version: "0123456789abcdef0123456789abcdef"}, {DocID: "b", Score: 1}}}
	b, err := messages.EncodeCandidates(c)
	if err != nil {
		t.Fatal(err)
	}
	gotC, err := messages.DecodeCandidates(b)
	c.SchemaVersion = messages.SchemaVersion
	if err != nil || !reflect.DeepEqual(gotC, c) {
		t.Fatalf("candidates: got %+v, %v\nwant %+v", gotC, err, c)
	}
	r := messages.Result{RequestID: "r", IndexFreshness: fresh, Documents: []messages.Document{
		{ID: "a", Score: 2, Version: "v1", StaleScore: true}, {ID: "b", Score: 1, Version: "v2"}, {ID: "c"},
	}}
	b, err = messages.EncodeResult(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), `"stale_score"`) != 1 || strings.Count(string(b), `"version"`) != 2 {
		t.Errorf("stale_score and version are not left out when empty: %s", b)
	}
	gotR, err := messages.DecodeResult(b)
	r.SchemaVersion = messages.SchemaVersion
	if err != nil || !reflect.DeepEqual(gotR, r) {
		t.Fatalf("result: got %+v, %v\nwant %+v", gotR, err, r)
	}
}

// TestOldPayloadsDecodeWithoutTheNewFields: payloads written before
// versions and index_freshness existed still decode, with the new fields
// empty, and a payload without them encodes without them.
func TestOldPayloadsDecodeWithoutTheNewFields(t *testing.T) {
	c, err := messages.DecodeCandidates([]byte(`{"schema_version":2,"request_id":"r","query":"q","top_k":1,"candidates":[{"doc_id":"a","score":1}],"timings":{"stages":[{"stage":"retrieval","queue_ms":1,"work_ms":2}]}}`))
	if err != nil || c.Candidates[0].Version != "" || c.IndexFreshness != nil {
		t.Fatalf("candidates %+v, %v", c, err)
	}
	r, err := messages.DecodeResult([]byte(`{"request_id":"r","documents":[{"id":"d","title":"t","score":1,"snippet":"s"}],"timings":{"retrieval_ms":2}}`))
	if err != nil || r.Documents[0].Version != "" || r.Documents[0].StaleScore || r.IndexFreshness != nil {
		t.Fatalf("result %+v, %v", r, err)
	}
	b, err := messages.EncodeCandidates(c)
	if err != nil || strings.Contains(string(b), `"version"`) || strings.Contains(string(b), "index_freshness") {
		t.Fatalf("encoded %s, %v", b, err)
	}
}

func TestEncodeRejectsBadVersionsAndFreshness(t *testing.T) {
	entry := func(stage string, pos int64, age float64) messages.IndexFreshness {
		return messages.IndexFreshness{{Stage: stage, Position: pos, NewestDocumentAgeMS: age}}
	}
	many := make(messages.IndexFreshness, messages.MaxStages+1)
	for i := range many {
		many[i] = messages.StageFreshness{Stage: "s" + strconv.Itoa(i)}
	}
	tests := []struct {
		name  string
		in    messages.Result
		field string
	}{
		{name: "negative position", in: messages.Result{RequestID: "r", IndexFreshness: entry("a", -1, 0)}, field: "index_freshness[0].position"},
		{name: "NaN age", in: messages.Result{RequestID: "r", IndexFreshness: entry("a", 1, math.NaN())}, field: "index_freshness[0].newest_document_age_ms"},
		{name: "bad stage", in: messages.Result{RequestID: "r", IndexFreshness: entry("", 1, 0)}, field: "index_freshness[0].stage"},
		{name: "duplicate stage", in: messages.Result{RequestID: "r", IndexFreshness: append(entry("a", 1, 0), entry("a", 2, 0)...)}, field: "index_freshness[1].stage"},
		{name: "too many entries", in: messages.Result{RequestID: "r", IndexFreshness: many}, field: "index_freshness"},
		{name: "stale without version", in: messages.Result{RequestID: "r", Documents: []messages.Document{{ID: "a", StaleScore: true}}}, field: "documents[0].version"},
		{name: "version too long", in: messages.Result{RequestID: "r", Documents: []messages.Document{{ID: "a", Version: strings.Repeat("f", messages.MaxVersionBytes+1)}}}, field: "documents[0].version"},
		{name: "version with a space", in: messages.Result{RequestID: "r", Documents: []messages.Document{{ID: "a", Version: "v 1"}}}, field: "documents[0].version"},
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
	c := messages.Candidates{RequestID: "r", Query: "q", TopK: 1, IndexFreshness: entry("a", -5, 0)}
	_, err := messages.EncodeCandidates(c)
	checkErr(t, err, invalidErr, messages.PayloadCandidates, "index_freshness[0].position")
	c = messages.Candidates{RequestID: "r", Query: "q", TopK: 1, Candidates: []messages.Candidate{{DocID: "a", Version: "é"}}}
	_, err = messages.EncodeCandidates(c)
	checkErr(t, err, invalidErr, messages.PayloadCandidates, "candidates[0].version")
}
