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
	if len(st.Instances) != 2 || len(st.Pathways) != 4 || len(st.Errors) != 0 {
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
