// SPDX-License-Identifier: Apache-2.0

package status_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/ops/status/statustest"
)

// TestStatusSourceJudgesLagHealth: the seeded group, LagRecords behind
// with no members and no commit since, is STOP on the requests edge from
// the third read; the requests topic's retention.ms set to 2 h leaves its
// oldest unconsumed record (LagAge, an hour, old) at most an hour of
// headroom. The group that does not exist has an unknown health.
func TestStatusSourceJudgesLagHealth(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	statustest.Seed(t, b.Addr())
	topo := statustest.Topology()
	opts := []kgo.Opt{kgo.SeedBrokers(b.Addr())}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).AlterTopicConfigs(t.Context(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms",
		Value: kadm.StringPtr(fmt.Sprint((2 * time.Hour).Milliseconds()))}}, topo.Stages[0].Input)
	if err == nil {
		_, err = resp.On(topo.Stages[0].Input, nil)
	}
	if err != nil {
		t.Fatalf("alter retention.ms: %v", err)
	}

	src, err := status.New(status.Config{Topology: topo, KafkaOptions: opts, Groups: topo.Groups()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var st status.Status
	for i := range lag.MinSamples {
		if st, err = src.Read(t.Context()); err != nil {
			t.Fatal(err)
		}
		h := st.Edges[0].Lag.Health
		if want := map[bool]lag.Status{true: lag.StatusUnknown, false: lag.StatusStop}[i < lag.MinSamples-1]; h.Status != want || h.Samples != i+1 {
			t.Fatalf("read %d: requests health %+v, want %s after %d reads", i, h, want, i+1)
		}
	}
	h := st.Edges[0].Lag.Health
	if h.Velocity != status.Of(0.0) || h.Drain.Known || !h.Headroom.Known || h.Headroom.V > time.Hour.Seconds() || h.Headroom.V < time.Hour.Seconds()-60 {
		t.Fatalf("requests health %+v: want velocity 0, no drain, a headroom just under an hour", h)
	}
	if len(st.Edges[0].Lags) != 1 || st.Edges[0].Lags[0].Health != h {
		t.Errorf("the group's lags %+v, want the edge's health", st.Edges[0].Lags)
	}
	if c := st.Edges[1].Lag.Health; c.Status != lag.StatusUnknown || c.Samples != 0 {
		t.Errorf("candidates health %+v, want unknown (the group does not exist)", c)
	}
	t.Logf("requests edge: %d behind, status %s, velocity %v/s, headroom %.0f s", st.Edges[0].Lag.Records.V, h.Status, h.Velocity.V, h.Headroom.V)
}
