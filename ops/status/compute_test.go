// SPDX-License-Identifier: Apache-2.0

package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/topology"
)

var topo = topology.Default(messages.DefaultTopics())

func row(dir pathway.Direction, topic, group string, rate float64) pathwaytopic.Row {
	return pathwaytopic.Row{Checkpoint: pathway.Checkpoint{Direction: dir, Topic: topic, Group: group}, Rate: rate}
}

// TestStatusResultsRateCountsEachRecordOnce: two collectors reading the whole
// results topic do not double its rate (run --serve has two: the run's
// and the gateway's); a group's edge keeps its own readers' rate.
func TestStatusResultsRateCountsEachRecordOnce(t *testing.T) {
	v := pathwaytopic.View{Rows: []pathwaytopic.Row{
		row(pathway.Out, "retrieval.results", "", 24),
		row(pathway.In, "retrieval.results", "", 24),
		row(pathway.In, "retrieval.results", "", 24),
		row(pathway.Out, "retrieval.candidates", "", 24),
		row(pathway.In, "retrieval.candidates", "enrichment", 24),
		row(pathway.In, "retrieval.candidates", "other", 7),
	}}
	if rate, _, _ := pathwayOf(v, "retrieval.results", ""); rate != 24 {
		t.Errorf("results rate %v, want 24 (written), not the sum of its two readers", rate)
	}
	if rate, _, _ := pathwayOf(v, "retrieval.candidates", "enrichment"); rate != 24 {
		t.Errorf("candidates rate for group enrichment %v, want 24", rate)
	}
	st := compute(measured{topology: topo, view: v})
	if st.Edges[2].Rate != 24 || st.Edges[1].Rate != 24 || st.Stages[1].Rate != 24 {
		t.Errorf("edges %+v stages %+v", st.Edges, st.Stages)
	}
}

// TestStatusLagUnknownRule: an age that could not be read is unknown (not 0, not
// -1), as is the lag of a group with no entry for the topic, of a group in
// error and of the results topic; a group that is not behind is 0 s.
func TestStatusLagUnknownRule(t *testing.T) {
	notFound := errors.New("group enrichment: GROUP_ID_NOT_FOUND")
	st := compute(measured{topology: topo, lags: []lag.PartitionLag{
		{Group: "retrieval", Topic: "retrieval.requests", Partition: 0, Records: 3, Seconds: 2.5},
		{Group: "retrieval", Topic: "retrieval.requests", Partition: 1, Records: 4, Seconds: -1, Err: errors.New("no record")},
		{Group: "other", Topic: "retrieval.requests", Partition: 0, Records: 0, Seconds: 0},
		{Group: "enrichment", Partition: -1, Records: -1, Seconds: -1, Err: notFound},
	}})
	req, cand, res := st.Edges[0], st.Edges[1], st.Edges[2]
	if req.Lag.Records != Of[int64](7) || req.Lag.Seconds.Known || req.Lag.Error != "partition 1: no record" {
		t.Errorf("requests lag %+v: want 7 records, age unknown", req.Lag)
	}
	if len(req.Lags) != 2 || req.Lags[0].Group != "other" || req.Lags[0].Records != Of[int64](0) || req.Lags[0].Seconds != Of(0.0) {
		t.Errorf("requests lags %+v: want the other group's 0 records and 0 s", req.Lags)
	}
	if cand.Lag.Records.Known || cand.Lag.Seconds.Known || cand.Lag.Error != notFound.Error() {
		t.Errorf("candidates lag %+v: want unknown, with the group's error", cand.Lag)
	}
	if res.Lag != (Lag{}) || res.Group != "" {
		t.Errorf("results lag %+v: want unknown", res.Lag)
	}
	if len(st.GroupErrors) != 1 || st.GroupErrors[0].Group != "enrichment" {
		t.Errorf("group errors %+v", st.GroupErrors)
	}
	b, err := json.Marshal(req.Lag)
	if err != nil || string(b) != `{"Records":7,"Seconds":null,"Error":"partition 1: no record"}` {
		t.Errorf("JSON %s %v: want the unknown age as null", b, err)
	}
	if got := req.Lag.Seconds.Format(func(float64) string { return "x" }); got != Unknown {
		t.Errorf("formatted %q, want %q", got, Unknown)
	}
}

// TestStatusDeadLettersOfStageInputs: a stage's dead letters are those of its
// input's dead-letter topic; unknown when not counted.
func TestStatusDeadLettersOfStageInputs(t *testing.T) {
	st := compute(measured{topology: topo, dead: map[string]deadCount{
		"retrieval.requests.dlq":   {n: Of[int64](2), reasons: []ReasonCount{{"bad", 2}}},
		"retrieval.candidates.dlq": {err: errors.New("retrieval.candidates.dlq: offsets not listed")},
		"retrieval.results.dlq":    {n: Of[int64](9)},
	}})
	if s := st.Stages[0]; s.DLQTopic != "retrieval.requests.dlq" || s.DeadLetters != Of[int64](2) || len(s.TopReasons) != 1 || s.Error != "" {
		t.Errorf("retrieval %+v", s)
	}
	if s := st.Stages[1]; s.DLQTopic != "retrieval.candidates.dlq" || s.DeadLetters.Known || s.TopReasons == nil || s.Error == "" {
		t.Errorf("enrichment %+v: want unknown with its error", s)
	}
}

// TestStatusQuantilesUnknownWhenNothingMeasured: an edge without records has
// unknown latencies; a measured one known ones, zero included.
func TestStatusQuantilesUnknownWhenNothingMeasured(t *testing.T) {
	var h pathway.Histogram
	h.Record(0, trace.SpanContext{}, 0)
	h.Record(3*time.Millisecond, trace.SpanContext{}, 0)
	r := row(pathway.In, "retrieval.requests", "retrieval", 2)
	r.Count, r.Latency, r.Origin = 2, h.Snapshot(), h.Snapshot()
	st := compute(measured{topology: topo, view: pathwaytopic.View{Rows: []pathwaytopic.Row{r}}})
	if q := st.Edges[0].Latency; !q.P50.Known || !q.P99.Known || q.P99.V <= 0 {
		t.Errorf("requests latency %+v: want known", q)
	}
	if q := st.Edges[1].Latency; q != (Quantiles{}) || st.Edges[1].Origin != (Quantiles{}) {
		t.Errorf("candidates latency %+v: want unknown", q)
	}
	if p := st.Pathways[0]; !p.Latency.P50.Known || p.Rate != 2 {
		t.Errorf("pathway %+v", p)
	}
}

func TestStatusMaybeJSON(t *testing.T) {
	for _, tt := range []struct {
		m    Maybe[int64]
		want string
	}{{Maybe[int64]{}, "null"}, {Of[int64](0), "0"}, {Of[int64](-1), "-1"}} {
		b, err := json.Marshal(tt.m)
		if err != nil || string(b) != tt.want {
			t.Errorf("%+v: %s %v, want %s", tt.m, b, err, tt.want)
		}
		var back Maybe[int64]
		if err := json.Unmarshal(b, &back); err != nil || back != tt.m {
			t.Errorf("%s decoded %+v %v", b, back, err)
		}
	}
}

// TestIndexesGroupWorkersAndTakeTheWorstLag: the feeds of three instances
// make one index with three workers; the index's lag is the worst of the
// workers that are not stale (a stale worker's is shown, not counted); a
// worker whose lag has one partition unreadable makes the seconds
// unknown; a failed measurement makes every lag unknown, with its error.
func TestIndexesGroupWorkersAndTakeTheWorstLag(t *testing.T) {
	now := time.Now()
	feed := func(offset int64) pathwaytopic.Feed {
		return pathwaytopic.Feed{Name: "retrieval", Topic: "retrieval.documents", Offsets: map[int32]int64{0: offset, 1: 10}, Ready: true}
	}
	v := pathwaytopic.View{Instances: []pathwaytopic.Instance{
		{Instance: "w-c", Feeds: []pathwaytopic.Feed{feed(3)}, Stale: true},
		{Instance: "w-a", Feeds: []pathwaytopic.Feed{feed(8)}},
		{Instance: "w-b", Feeds: []pathwaytopic.Feed{feed(9), {Name: "enrichment", Topic: "retrieval.documents", Offsets: map[int32]int64{0: 9}}}},
	}}
	feeds := feedsOf(v)
	const docs = "retrieval.documents"
	lags := map[feedKey][]lag.PartitionLag{
		{"retrieval", docs, "w-a"}:  {{Partition: 0, Records: 2, Seconds: 1.5}, {Partition: 1, Records: 0}},
		{"retrieval", docs, "w-b"}:  {{Partition: 0, Records: 1, Seconds: 4}, {Partition: 1, Records: 3, Seconds: -1, Err: errors.New("no record")}},
		{"retrieval", docs, "w-c"}:  {{Partition: 0, Records: 7, Seconds: 60}, {Partition: 1, Records: 0}},
		{"enrichment", docs, "w-b"}: {{Partition: 0, Records: 1, Seconds: 0.5}},
	}
	got := indexesOf(v, feeds, lags, nil, now)
	if len(got) != 2 || got[0].Name != "enrichment" || got[1].Name != "retrieval" {
		t.Fatalf("indexes %+v, want enrichment then retrieval", got)
	}
	r := got[1]
	var names []string
	for _, w := range r.Workers {
		names = append(names, w.Instance)
	}
	if fmt.Sprint(names) != "[w-a w-b w-c]" || r.Workers[0].Position != 18 {
		t.Errorf("workers %v (position %d), want w-a, w-b, w-c, w-a at 18", names, r.Workers[0].Position)
	}
	if w := r.Workers[1]; w.Lag.Records != Of[int64](4) || w.Lag.Seconds.Known || w.Lag.Error != "partition 1: no record" {
		t.Errorf("w-b lag %+v, want 4 records, unknown age", w.Lag)
	}
	if r.Lag.Records != Of[int64](4) || r.Lag.Seconds.Known {
		t.Errorf("index lag %+v, want the worst of w-a and w-b (4 records, age unknown), not the stale w-c's", r.Lag)
	}
	if r.Workers[2].Lag.Records != Of[int64](7) {
		t.Errorf("the stale worker's lag %+v, want shown", r.Workers[2].Lag)
	}
	failed := indexesOf(v, feeds, nil, errors.New("end offsets: broker down"), now)
	if l := failed[1].Workers[0].Lag; l.Records.Known || l.Error != "end offsets: broker down" || failed[1].Lag.Records.Known {
		t.Errorf("after a failed measurement: %+v and %+v, want unknown with the error", l, failed[1].Lag)
	}
}
