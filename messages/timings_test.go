// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// stages returns timings with one entry per name, durations zero.
func stages(names ...string) messages.Timings {
	var t messages.Timings
	for _, n := range names {
		t.Stages = append(t.Stages, messages.StageTiming{Stage: n})
	}
	return t
}

// manyStages returns timings with n distinct entries s0, s1, ...
func manyStages(n int) messages.Timings {
	names := make([]string, n)
	for i := range names {
		names[i] = "s" + strconv.Itoa(i)
	}
	return stages(names...)
}

// stagesJSON returns a stages array of n distinct entries.
func stagesJSON(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"stage":"s` + strconv.Itoa(i) + `","queue_ms":1,"work_ms":2}`
	}
	return `[` + strings.Join(items, ",") + `]`
}

// timingsCases are timings values, checked inside both candidates and
// result payloads (and against both schemas). Fields are full paths.
func timingsCases() []payloadCase {
	return []payloadCase{
		{name: "stages three", body: `{"stages":[{"stage":"retrieval","queue_ms":1,"work_ms":2},{"stage":"rerank","queue_ms":-0.5,"work_ms":0},{"stage":"enrichment","queue_ms":3,"work_ms":4}]}`},
		{name: "stages empty", body: `{"stages":[]}`},
		{name: "stages null reads the flat members", body: `{"stages":null,"retrieval_ms":1}`},
		{name: "stage durations absent or null", body: `{"stages":[{"stage":"a"},{"stage":"b","queue_ms":null,"work_ms":null}]}`},
		{name: "stage unknown members ignored", body: `{"stages":[{"stage":"a","cpu_ms":3}],"rerank_ms":5}`},
		{name: "stages at the limit", body: `{"stages":` + stagesJSON(messages.MaxStages) + `}`},
		{name: "stage name at the limit", body: `{"stages":[{"stage":"` + strings.Repeat("a", messages.MaxStageNameBytes) + `"}]}`},
		{name: "stage name characters", body: `{"stages":[{"stage":"Re-rank_2.v1"}]}`},
		{name: "stages win over flat members", body: `{"stages":[{"stage":"rerank"}],"retrieval_ms":1,"enrichment_queue_ms":null}`},

		{name: "stages object", body: `{"stages":{}}`, kind: invalidErr, field: "timings.stages"},
		{name: "stages over the limit", body: `{"stages":` + stagesJSON(messages.MaxStages+1) + `}`, kind: invalidErr, field: "timings.stages"},
		{name: "stage entry null", body: `{"stages":[{"stage":"a"},null]}`, kind: invalidErr, field: "timings.stages[1]"},
		{name: "stage entry string", body: `{"stages":["retrieval"]}`, kind: invalidErr, field: "timings.stages[0]"},
		{name: "stage name missing", body: `{"stages":[{"queue_ms":1}]}`, kind: invalidErr, field: "timings.stages[0].stage"},
		{name: "stage name null", body: `{"stages":[{"stage":null}]}`, kind: invalidErr, field: "timings.stages[0].stage"},
		{name: "stage name number", body: `{"stages":[{"stage":1}]}`, kind: invalidErr, field: "timings.stages[0].stage"},
		{name: "stage name empty", body: `{"stages":[{"stage":"a"},{"stage":""}]}`, kind: invalidErr, field: "timings.stages[1].stage"},
		{name: "stage name over the limit", body: `{"stages":[{"stage":"` + strings.Repeat("a", messages.MaxStageNameBytes+1) + `"}]}`, kind: invalidErr, field: "timings.stages[0].stage"},
		{name: "stage name space", body: `{"stages":[{"stage":"re rank"}]}`, kind: invalidErr, field: "timings.stages[0].stage"},
		{name: "stage name non-ascii", body: `{"stages":[{"stage":"r\u00e9rank"}]}`, kind: invalidErr, field: "timings.stages[0].stage"},
		{name: "stage name invalid utf-8", body: "{\"stages\":[{\"stage\":\"r\xffrank\"}]}", kind: invalidErr, field: "timings.stages[0].stage"},
		{name: "stage names duplicate", body: `{"stages":[{"stage":"retrieval"},{"stage":"rerank"},{"stage":"retrieval"}]}`, kind: invalidErr, field: "timings.stages[2].stage",
			schemaDiffers: "JSON Schema cannot require one member to be unique across array items"},
		{name: "queue_ms string", body: `{"stages":[{"stage":"a"},{"stage":"b"},{"stage":"c","queue_ms":"1"}]}`, kind: invalidErr, field: "timings.stages[2].queue_ms"},
		{name: "work_ms beyond float64", body: `{"stages":[{"stage":"a","work_ms":-1e400}]}`, kind: invalidErr, field: "timings.stages[0].work_ms"},
		{name: "flat member string next to stages", body: `{"stages":[{"stage":"a"}],"retrieval_ms":"1"}`, kind: invalidErr, field: "timings.retrieval_ms"},
	}
}

func TestTimingsStage(t *testing.T) {
	tm := messages.Timings{Stages: []messages.StageTiming{{Stage: "retrieval", QueueMS: 1, WorkMS: 2}, {Stage: "rerank", WorkMS: 3}}}
	if st, ok := tm.Stage("rerank"); !ok || st != (messages.StageTiming{Stage: "rerank", WorkMS: 3}) {
		t.Errorf("Stage(rerank) = %+v, %v", st, ok)
	}
	if st, ok := tm.Stage("enrichment"); ok || st != (messages.StageTiming{}) {
		t.Errorf("Stage(enrichment) = %+v, %v; want none", st, ok)
	}
	if _, ok := (messages.Timings{}).Stage(""); ok {
		t.Error("empty timings have a stage")
	}
}

func TestTimingsWith(t *testing.T) {
	r := messages.StageTiming{Stage: "retrieval", QueueMS: 1, WorkMS: 2}
	x := messages.StageTiming{Stage: "rerank", QueueMS: 3, WorkMS: 4}
	e := messages.StageTiming{Stage: "enrichment", QueueMS: 5, WorkMS: 6}
	got := messages.Timings{}.With(r).With(x).With(e)
	if want := []messages.StageTiming{r, x, e}; !reflect.DeepEqual(got.Stages, want) {
		t.Fatalf("appended %+v, want %+v", got.Stages, want)
	}
	x2 := messages.StageTiming{Stage: "rerank", QueueMS: 7, WorkMS: 8}
	replaced := got.With(x2)
	if want := []messages.StageTiming{r, x2, e}; !reflect.DeepEqual(replaced.Stages, want) {
		t.Fatalf("replaced %+v, want %+v (in place)", replaced.Stages, want)
	}
	if got.Stages[1] != x {
		t.Fatalf("With changed its receiver: %+v", got.Stages)
	}

	// A receiver with spare capacity: two Withs must not share it.
	base := messages.Timings{Stages: make([]messages.StageTiming, 1, 8)}
	base.Stages[0] = r
	a, b := base.With(x), base.With(e)
	if a.Stages[1] != x || b.Stages[1] != e || len(base.Stages) != 1 {
		t.Fatalf("Withs share the receiver's array: %+v %+v", a.Stages, b.Stages)
	}
	a.Stages[0].WorkMS = 99
	if base.Stages[0] != r || b.Stages[0] != r {
		t.Fatal("the result of With aliases the receiver's slice")
	}
}

// TestTimingsV1Decodes: a payload of schema_version 1 (or none) with the
// flat members reads into entries named retrieval and enrichment, one for
// each stage with at least one of its members present and not null.
func TestTimingsV1Decodes(t *testing.T) {
	tests := []struct {
		name, timings string
		want          []messages.StageTiming
	}{
		{"all four", `{"retrieval_queue_ms":1,"retrieval_ms":2,"enrichment_queue_ms":3,"enrichment_ms":4}`,
			[]messages.StageTiming{{Stage: "retrieval", QueueMS: 1, WorkMS: 2}, {Stage: "enrichment", QueueMS: 3, WorkMS: 4}}},
		{"written by a v1 retrieval worker", `{"retrieval_queue_ms":-3,"retrieval_ms":1.5,"enrichment_queue_ms":0,"enrichment_ms":0}`,
			[]messages.StageTiming{{Stage: "retrieval", QueueMS: -3, WorkMS: 1.5}, {Stage: "enrichment"}}},
		{"one member", `{"enrichment_ms":4}`, []messages.StageTiming{{Stage: "enrichment", WorkMS: 4}}},
		{"null members make no entry", `{"retrieval_queue_ms":null,"retrieval_ms":null,"enrichment_queue_ms":2}`,
			[]messages.StageTiming{{Stage: "enrichment", QueueMS: 2}}},
		{"no members", `{}`, nil},
		{"null", `null`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, version := range []string{``, `"schema_version":0,`, `"schema_version":1,`} {
				c, err := messages.DecodeCandidates([]byte(`{` + version + `"request_id":"r","query":"q","top_k":1,"candidates":[],"timings":` + tt.timings + `}`))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(c.Timings.Stages, tt.want) {
					t.Errorf("%scandidates timings %+v, want %+v", version, c.Timings.Stages, tt.want)
				}
				r, err := messages.DecodeResult([]byte(`{` + version + `"request_id":"r","documents":[],"timings":` + tt.timings + `}`))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(r.Timings.Stages, tt.want) {
					t.Errorf("%sresult timings %+v, want %+v", version, r.Timings.Stages, tt.want)
				}
			}
		})
	}
}

// TestTimingsStagesWin: when stages is present it is read, and the flat
// members are not.
func TestTimingsStagesWin(t *testing.T) {
	body := `{"schema_version":2,"request_id":"r","documents":[],"timings":{` +
		`"retrieval_queue_ms":10,"retrieval_ms":20,"enrichment_queue_ms":30,"enrichment_ms":40,` +
		`"stages":[{"stage":"retrieval","queue_ms":1,"work_ms":2},{"stage":"rerank","queue_ms":5,"work_ms":6}]}}`
	r, err := messages.DecodeResult([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []messages.StageTiming{{Stage: "retrieval", QueueMS: 1, WorkMS: 2}, {Stage: "rerank", QueueMS: 5, WorkMS: 6}}
	if !reflect.DeepEqual(r.Timings.Stages, want) {
		t.Errorf("timings %+v, want %+v", r.Timings.Stages, want)
	}
}

// TestTimingsDecodeKeepsOrder: a list of three stages decodes in the
// order written, which is not alphabetical.
func TestTimingsDecodeKeepsOrder(t *testing.T) {
	body := `{"request_id":"r","query":"q","top_k":1,"candidates":[],"timings":{"stages":[` +
		`{"stage":"retrieval","queue_ms":1,"work_ms":2},{"stage":"rerank","queue_ms":3,"work_ms":4},{"stage":"enrichment","queue_ms":5,"work_ms":6}]}}`
	c, err := messages.DecodeCandidates([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []messages.StageTiming{{Stage: "retrieval", QueueMS: 1, WorkMS: 2}, {Stage: "rerank", QueueMS: 3, WorkMS: 4}, {Stage: "enrichment", QueueMS: 5, WorkMS: 6}}
	if !reflect.DeepEqual(c.Timings.Stages, want) {
		t.Errorf("timings %+v, want %+v", c.Timings.Stages, want)
	}
}

// TestTimingsEncodeLegacyMembers: the encoders write stages and, for
// readers of schema_version 1, the flat members of the retrieval and
// enrichment entries present, and of no other stage.
func TestTimingsEncodeLegacyMembers(t *testing.T) {
	three := messages.Timings{Stages: []messages.StageTiming{
		{Stage: "retrieval", QueueMS: 1.5, WorkMS: 2},
		{Stage: "rerank", QueueMS: 3, WorkMS: 4},
		{Stage: "enrichment", QueueMS: -5, WorkMS: 6.25},
	}}
	tests := []struct {
		name string
		in   messages.Timings
		want string
	}{
		{"three stages", three, `{"stages":[{"stage":"retrieval","queue_ms":1.5,"work_ms":2},{"stage":"rerank","queue_ms":3,"work_ms":4},{"stage":"enrichment","queue_ms":-5,"work_ms":6.25}],` +
			`"retrieval_queue_ms":1.5,"retrieval_ms":2,"enrichment_queue_ms":-5,"enrichment_ms":6.25}`},
		{"retrieval only", stages("retrieval"), `{"stages":[{"stage":"retrieval","queue_ms":0,"work_ms":0}],"retrieval_queue_ms":0,"retrieval_ms":0}`},
		{"enrichment only", stages("enrichment"), `{"stages":[{"stage":"enrichment","queue_ms":0,"work_ms":0}],"enrichment_queue_ms":0,"enrichment_ms":0}`},
		{"other stages only", stages("rerank", "retrieval-2"), `{"stages":[{"stage":"rerank","queue_ms":0,"work_ms":0},{"stage":"retrieval-2","queue_ms":0,"work_ms":0}]}`},
		{"none", messages.Timings{}, `{"stages":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := messages.EncodeResult(messages.Result{RequestID: "r", Timings: tt.in})
			if err != nil {
				t.Fatal(err)
			}
			want := `{"schema_version":2,"request_id":"r","documents":[],"timings":` + tt.want + `}`
			if string(b) != want {
				t.Errorf("got  %s\nwant %s", b, want)
			}
			b, err = messages.EncodeCandidates(messages.Candidates{RequestID: "r", Query: "q", TopK: 1, Timings: tt.in})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(b), `"timings":`+tt.want+`}`) {
				t.Errorf("candidates %s, want timings %s", b, tt.want)
			}
		})
	}

	// A v1 reader that knows only the flat members reads what it did.
	b, err := messages.EncodeResult(messages.Result{RequestID: "r", Timings: three})
	if err != nil {
		t.Fatal(err)
	}
	var v1 struct {
		Timings struct {
			RetrievalQueueMS  float64 `json:"retrieval_queue_ms"`
			RetrievalMS       float64 `json:"retrieval_ms"`
			EnrichmentQueueMS float64 `json:"enrichment_queue_ms"`
			EnrichmentMS      float64 `json:"enrichment_ms"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(b, &v1); err != nil {
		t.Fatal(err)
	}
	if tm := v1.Timings; tm.RetrievalQueueMS != 1.5 || tm.RetrievalMS != 2 || tm.EnrichmentQueueMS != -5 || tm.EnrichmentMS != 6.25 {
		t.Errorf("a v1 reader sees %+v", tm)
	}
}

// TestTimingsJSON: encoding/json (the gateway's answers) writes and reads
// timings by the payload rules.
func TestTimingsJSON(t *testing.T) {
	in := messages.Timings{Stages: []messages.StageTiming{{Stage: "retrieval", QueueMS: 1, WorkMS: 2}, {Stage: "rerank", QueueMS: 3, WorkMS: 4}}}
	b, err := json.Marshal(struct {
		Timings messages.Timings `json:"timings"`
	}{in})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Timings messages.Timings `json:"timings"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Timings, in) {
		t.Errorf("round trip %s gave %+v", b, out.Timings)
	}

	var v1 messages.Timings
	if err := json.Unmarshal([]byte(`{"retrieval_ms":2,"enrichment_queue_ms":3}`), &v1); err != nil {
		t.Fatal(err)
	}
	if want := []messages.StageTiming{{Stage: "retrieval", WorkMS: 2}, {Stage: "enrichment", QueueMS: 3}}; !reflect.DeepEqual(v1.Stages, want) {
		t.Errorf("v1 timings read as %+v", v1.Stages)
	}

	kept := in
	if err := json.Unmarshal([]byte(`null`), &kept); err != nil || !reflect.DeepEqual(kept, in) {
		t.Errorf("null: %v, %+v", err, kept)
	}
	for body, field := range map[string]string{
		`{"stages":[{"stage":"a"},{"stage":"a"}]}`:            "timings.stages[1].stage",
		`{"stages":[{"stage":"a","work_ms":"1"}]}`:            "timings.stages[0].work_ms",
		`{"stages":` + stagesJSON(messages.MaxStages+1) + `}`: "timings.stages",
		`[]`: "timings",
	} {
		var tm messages.Timings
		err := json.Unmarshal([]byte(body), &tm)
		checkErr(t, err, invalidErr, "", field)
	}
}

// TestTimingsJSONInvalidUTF8: encoding/json hands UnmarshalJSON strings
// with invalid UTF-8 as they are; they are rejected as in the decoders.
func TestTimingsJSONInvalidUTF8(t *testing.T) {
	var tm messages.Timings
	err := json.Unmarshal([]byte("{\"stages\":[{\"stage\":\"a\",\"note\":\"\xff\"}]}"), &tm)
	var de *messages.DecodeError
	if !errors.As(err, &de) || de.Payload != "" || !errors.Is(err, messages.ErrInvalidUTF8) {
		t.Fatalf("error %v (%T), want a *DecodeError with no payload matching ErrInvalidUTF8", err, err)
	}
}
