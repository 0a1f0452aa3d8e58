// SPDX-License-Identifier: Apache-2.0

// Package statustest seeds a broker with a known pipeline state, for the
// tests of package status and of its renderers: pathway windows published
// to the pathways topic, a lagging consumer group and dead letters.
package statustest

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/topology"
)

// What Seed publishes, on the default topology.
const (
	// Group is the stage group that lags: LagRecords records behind on the
	// requests topic, the oldest LagAge old (at least).
	Group      = messages.StageRetrieval
	LagRecords = 3
	LagAge     = time.Hour
	// MissingGroup is the other stage's group, which does not exist: its
	// lag is unknown.
	MissingGroup = messages.StageEnrichment
	// RequestsDeadLetters are the letters of the requests' dead-letter
	// topic; the results' dead-letter topic holds ResultsDeadLetters more,
	// which count nowhere.
	RequestsDeadLetters = 3
	ResultsDeadLetters  = 1
	// TopReason is the most frequent reason (2 of RequestsDeadLetters).
	TopReason = "request: bad json"
	// IndexRecords are the records of the documents topic, the first
	// IndexLagAge old (at least); the retrieval instance's index has
	// applied IndexApplied of them and holds as many documents, and its
	// window measured 3 applied, the slowest 30 ms after publication.
	IndexRecords = 6
	IndexApplied = 2
	IndexLagAge  = 2 * time.Hour
)

// Topology is the seeded pipeline's.
func Topology() topology.Topology { return topology.Default(messages.DefaultTopics()) }

// Seed publishes to the broker at addr, on the default topology and the
// default pathways topic, each topic with one partition: windows of two
// instances that measured the requests and results edges but no record
// read from the candidates topic (whose latencies are unknown); Group's
// committed offset LagRecords behind the requests topic's end; the dead
// letters; the documents topic, of which the retrieval instance's index
// has applied IndexApplied records of IndexRecords.
func Seed(t testing.TB, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topo := Topology()
	topics := append(topo.All(), pathwaytopic.DefaultTopic)
	if _, err := adm.CreateTopics(t.Context(), 1, 1, nil, topics...); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	docsOld := time.Now().Add(-IndexLagAge)
	for i := range IndexRecords {
		recs = append(recs, &kgo.Record{Topic: topo.Documents, Key: []byte{'a' + byte(i)}, Value: []byte("{}"), Timestamp: docsOld.Add(time.Duration(i) * time.Millisecond)})
	}
	old := time.Now().Add(-LagAge)
	for i := range LagRecords + 2 {
		recs = append(recs, &kgo.Record{Topic: topo.Requests(), Value: []byte("{}"), Timestamp: old.Add(time.Duration(i) * time.Millisecond)})
	}
	letter := func(topic, reason string) *kgo.Record {
		return &kgo.Record{Topic: messages.DLQTopic(topic), Value: []byte("x"),
			Headers: []kgo.RecordHeader{{Key: deadletters.HeaderReason, Value: []byte(reason)}}}
	}
	recs = append(recs, letter(topo.Requests(), TopReason), letter(topo.Requests(), "request: too large"), letter(topo.Requests(), TopReason),
		letter(topo.Results(), "results: nobody reads these"))
	recs = append(recs, windows(t, time.Now())...)
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var commit kadm.Offsets
	commit.Add(kadm.Offset{Topic: topo.Requests(), Partition: 0, At: 2, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(t.Context(), Group, commit); err != nil {
		t.Fatal(err)
	}
}

// windows are the pathway records of two instances whose windows end at
// end.
func windows(t testing.TB, end time.Time) []*kgo.Record {
	t.Helper()
	topo := Topology()
	snap := func(ds ...time.Duration) pathway.Snapshot {
		var h pathway.Histogram
		for _, d := range ds {
			h.Record(d, trace.SpanContext{}, 0)
		}
		return h.Snapshot()
	}
	ms := time.Millisecond
	cp := func(service, group, topic string, d pathway.Direction) pathway.Checkpoint {
		return pathway.Checkpoint{Service: service, Group: group, Topic: topic, Direction: d}
	}
	// The cohort of a minute before end: 40 requests entered, 30 ended;
	// the other 10 wait on the candidates topic.
	cohort := func(n uint64) []pathway.CohortCount {
		at := end.Add(-time.Minute).Unix()
		return []pathway.CohortCount{{Bin: at - at%5, Count: n}}
	}
	ws := []pathwaytopic.Window{
		{Service: "kretrieve-gateway", Instance: "kretrieve-gateway@test/1-aaaaaa", Start: end.Add(-10 * time.Second), End: end, Interval: 10 * time.Second,
			Series: []pathwaytopic.Series{
				{Checkpoint: cp("kretrieve-gateway", "", topo.Requests(), pathway.Out), Hash: 0x11, Total: 40, Edge: snap(0, 0, 0, 0), Origin: snap(0, 0, 0, 0), Cohorts: cohort(40)},
				{Checkpoint: cp("kretrieve-gateway", "", topo.Results(), pathway.In), Hash: 0x66, Parent: 0x55, Total: 30, Edge: snap(2*ms, 3*ms, 40*ms), Origin: snap(20*ms, 30*ms, 900*ms), Cohorts: cohort(30)},
			}},
		{Service: "kretrieve-retrieval", Instance: "kretrieve-retrieval@test/2-bbbbbb", Start: end.Add(-5 * time.Second), End: end, Interval: 5 * time.Second,
			Series: []pathwaytopic.Series{
				{Checkpoint: cp("kretrieve-retrieval", messages.StageRetrieval, topo.Requests(), pathway.In), Hash: 0x22, Parent: 0x11, Total: 40,
					Edge: snap(ms, ms, 2*ms, 7*ms, 12*ms), Origin: snap(ms, ms, 2*ms, 7*ms, 12*ms), Cohorts: cohort(40)},
				{Checkpoint: cp("kretrieve-retrieval", "", topo.Stages[0].Output, pathway.Out), Hash: 0x33, Parent: 0x22, Total: 40,
					Edge: snap(ms, ms), Origin: snap(5*ms, 9*ms), Cohorts: cohort(40)},
				{Checkpoint: cp("kretrieve-retrieval", messages.StageRetrieval, topo.Documents, pathway.In), Hash: 0x88, Parent: 0x77, Total: 3,
					Edge: snap(4*ms, 6*ms, 30*ms), Origin: snap(4*ms, 6*ms, 30*ms)},
			},
			Feeds: []pathwaytopic.Feed{{Name: messages.StageRetrieval, Topic: topo.Documents, Offsets: map[int32]int64{0: IndexApplied},
				Newest: time.Now().Add(-IndexLagAge).Add(time.Millisecond), Documents: IndexApplied, Ready: true}}},
	}
	var recs []*kgo.Record
	for _, w := range ws {
		b, err := w.Encode()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: pathwaytopic.DefaultTopic, Key: []byte(w.Instance), Value: b})
	}
	return recs
}
