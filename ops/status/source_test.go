// SPDX-License-Identifier: Apache-2.0

package status_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/ops/status/statustest"
)

// TestStatusSourceReadsTheSeededState reads a seeded broker: the windows' rates
// and latencies, the lagging group in records and seconds, the missing
// group's unknown lag, the stage inputs' dead letters and their reasons
// (not the results' dead-letter topic's).
func TestStatusSourceReadsTheSeededState(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	statustest.Seed(t, b.Addr())
	topo := statustest.Topology()
	src, err := status.New(status.Config{Topology: topo, KafkaOptions: []kgo.Opt{kgo.SeedBrokers(b.Addr())}, Groups: topo.Groups(), Reasons: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	st, err := src.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Instances) != 2 || len(st.Pathways) != 5 || len(st.Errors) != 0 {
		t.Errorf("instances %+v pathways %d errors %v", st.Instances, len(st.Pathways), st.Errors)
	}
	req, cand, res := st.Edges[0], st.Edges[1], st.Edges[2]
	if req.Rate != 1 || !req.Latency.P99.Known || req.Latency.P99.V < 7 {
		t.Errorf("requests edge %+v: want 5 records in 5 s and a p99 ≥ 7 ms", req)
	}
	if req.Lag.Records != status.Of[int64](statustest.LagRecords) || !req.Lag.Seconds.Known || req.Lag.Seconds.V < statustest.LagAge.Seconds() {
		t.Errorf("requests lag %+v: want %d records, ≥ %v", req.Lag, statustest.LagRecords, statustest.LagAge)
	}
	if cand.Rate != 0 || cand.Latency.P50.Known || cand.Lag.Records.Known || cand.Lag.Seconds.Known || cand.Lag.Error == "" {
		t.Errorf("candidates edge %+v: want no rate, unknown latencies and lag", cand)
	}
	if res.Rate != 0.3 || !res.Origin.P99.Known || res.Lag.Records.Known {
		t.Errorf("results edge %+v", res)
	}
	// The ingestion edge: the retrieval index, its rate and freshness from
	// the window, its one worker's lag measured now from where it stood.
	if len(st.Indexes) != 1 || len(st.Indexes[0].Workers) != 1 {
		t.Fatalf("indexes %+v, want the retrieval index with one worker", st.Indexes)
	}
	ix, w := st.Indexes[0], st.Indexes[0].Workers[0]
	if ix.Name != "retrieval" || ix.Topic != topo.Documents || ix.Rate != 0.6 || !ix.Freshness.P99.Known || ix.Freshness.P99.V < 30 || ix.Freshness.P50.V > 7 {
		t.Errorf("index %+v: want 3 records in 5 s, a p50 about 6 ms and a p99 ≥ 30 ms", ix)
	}
	wantLag := int64(statustest.IndexRecords - statustest.IndexApplied)
	if w.Instance != "kretrieve-retrieval@test/2-bbbbbb" || w.Stale || !w.Ready || w.Position != statustest.IndexApplied || w.Documents != statustest.IndexApplied ||
		w.Lag.Records != status.Of(wantLag) || !w.Lag.Seconds.Known || w.Lag.Seconds.V < statustest.IndexLagAge.Seconds() ||
		!w.NewestAgeMS.Known || w.NewestAgeMS.V < float64(statustest.IndexLagAge.Milliseconds()-1) {
		t.Errorf("worker %+v: want ready, %d applied, %d records behind, the oldest ≥ %v old", w, statustest.IndexApplied, wantLag, statustest.IndexLagAge)
	}
	if ix.Lag != w.Lag {
		t.Errorf("index lag %+v, want its one worker's %+v", ix.Lag, w.Lag)
	}
	if len(st.GroupErrors) != 1 || st.GroupErrors[0].Group != statustest.MissingGroup {
		t.Errorf("group errors %+v", st.GroupErrors)
	}
	s0, s1 := st.Stages[0], st.Stages[1]
	if s0.DeadLetters != status.Of[int64](statustest.RequestsDeadLetters) || len(s0.TopReasons) != 2 ||
		s0.TopReasons[0] != (status.ReasonCount{Reason: statustest.TopReason, Count: 2}) || s0.Rate != 1 {
		t.Errorf("retrieval stage %+v", s0)
	}
	if s1.DeadLetters != status.Of[int64](0) || len(s1.TopReasons) != 0 || s1.Error != "" {
		t.Errorf("enrichment stage %+v: want 0 dead letters", s1)
	}
	// Read again: the reasons come from the cache, the same.
	again, err := src.Read(t.Context())
	if err != nil || again.Stages[0].TopReasons[0] != s0.TopReasons[0] {
		t.Errorf("second read %+v %v", again.Stages[0], err)
	}
	src.Close()
	if _, err := src.Read(t.Context()); err == nil {
		t.Error("read after Close: no error")
	}
	// Without Reasons, the letters are counted, not read.
	counting, err := status.New(status.Config{Topology: topo, KafkaOptions: []kgo.Opt{kgo.SeedBrokers(b.Addr())}})
	if err != nil {
		t.Fatal(err)
	}
	defer counting.Close()
	st, err = counting.Read(t.Context())
	if s := st.Stages[0]; err != nil || s.DeadLetters != s0.DeadLetters || len(s.TopReasons) != 0 || st.Edges[0].Lag.Records.Known {
		t.Errorf("without reasons nor groups: %+v %+v %v", s, st.Edges[0].Lag, err)
	}
}
