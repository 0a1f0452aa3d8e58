// SPDX-License-Identifier: Apache-2.0

package lag_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/otelnames"
)

const healthTopic = "lag.health"

// healthFixture is a broker (no retention) with healthTopic: one
// partition holding 10 records stamped 55 minutes ago.
type healthFixture struct {
	opts []kgo.Opt
	cl   *kgo.Client
	adm  *kadm.Client
}

func newHealthFixture(t *testing.T) *healthFixture {
	t.Helper()
	b := brokertest.NewBroker(t, 1)
	opts := []kgo.Opt{kgo.SeedBrokers(b.Addr())}
	cl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(healthTopic))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	f := &healthFixture{opts: opts, cl: cl, adm: kadm.NewClient(cl)}
	if resp, err := f.adm.CreateTopic(t.Context(), 1, 1, nil, healthTopic); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	f.produce(t, 10, time.Now().Add(-55*time.Minute))
	return f
}

// produce appends n records stamped ts.
func (f *healthFixture) produce(t *testing.T, n int, ts time.Time) {
	t.Helper()
	var rs []*kgo.Record
	for range n {
		rs = append(rs, &kgo.Record{Value: []byte("v"), Timestamp: ts})
	}
	if err := f.cl.ProduceSync(t.Context(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// commit commits offset o of partition 0 for group, as an admin would.
func (f *healthFixture) commit(t *testing.T, group string, o int64) {
	t.Helper()
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: healthTopic, Partition: 0, At: o, LeaderEpoch: -1})
	resp, err := f.adm.CommitOffsets(t.Context(), group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit %s at %d: %v", group, o, err)
	}
}

// monitor returns a Monitor of group (measured by Update only) and the
// reader of its gauges.
func (f *healthFixture) monitor(t *testing.T, group string, refresh time.Duration) (*lag.Monitor, sdkmetric.Reader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := lag.NewMonitor(f.opts, lag.MonitorConfig{Groups: []string{group}, Interval: time.Hour, RetentionRefresh: refresh}, lag.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, reader
}

// update measures once and returns the entry of partition 0.
func update(t *testing.T, m *lag.Monitor) lag.PartitionLag {
	t.Helper()
	lags, err := m.Update(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(lags) != 1 || lags[0].Err != nil {
		t.Fatalf("measurement %+v, want one entry without error", lags)
	}
	return lags[0]
}

// healthGauges returns the health gauges' values of partition 0, by
// metric name.
func healthGauges(t *testing.T, r sdkmetric.Reader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					out[m.Name] = float64(dp.Value)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					out[m.Name] = dp.Value
				}
			}
		}
	}
	return out
}

// TestHealthStallWhileAMemberStays: a member joins at the committed
// offset 4 and never commits; with 6 records to consume the status is
// STALL from the third measurement, exported as 2.
func TestHealthStallWhileAMemberStays(t *testing.T) {
	f := newHealthFixture(t)
	f.commit(t, "stalled", 4)
	member, err := kgo.NewClient(append(f.opts, kgo.ConsumerGroup("stalled"), kgo.ConsumeTopics(healthTopic),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	pctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	member.PollFetches(pctx) // joins; its records are never committed
	cancel()
	poll.Until(t, 10*time.Second, func() bool {
		gs, err := f.adm.DescribeGroups(t.Context(), "stalled")
		return err == nil && gs["stalled"].State == "Stable" && len(gs["stalled"].Members) == 1
	}, "the member to join")

	m, reader := f.monitor(t, "stalled", 0)
	var l lag.PartitionLag
	for i := range 3 {
		l = update(t, m)
		if want := map[bool]lag.Status{true: lag.StatusUnknown, false: lag.StatusStall}[i < 2]; l.Health.Status != want {
			t.Fatalf("measurement %d: status %s, want %s (%+v)", i, l.Health.Status, want, l)
		}
	}
	if l.Members != 1 || l.Records != 6 || l.Health.Velocity != 0 || l.Health.Drain != -1 {
		t.Fatalf("stalled entry %+v", l)
	}
	g := healthGauges(t, reader)
	if g[otelnames.MetricLagStatus] != 2 || g[otelnames.MetricLagVelocity] != 0 {
		t.Fatalf("gauges %v, want status 2 and velocity 0", g)
	}
	if _, ok := g[otelnames.MetricLagDrain]; ok {
		t.Fatalf("drain exported while not draining: %v", g)
	}
	// Infinite retention (the test broker's): no headroom.
	if _, ok := g[otelnames.MetricRetentionHeadroom]; ok || l.Health.HeadroomKnown {
		t.Fatalf("headroom with infinite retention: %v %+v", g, l.Health)
	}
}

// TestHealthStopWithoutMembers: a group with no members that committed 4
// of 10 is STOP (exported as 3).
func TestHealthStopWithoutMembers(t *testing.T) {
	f := newHealthFixture(t)
	f.commit(t, "gone", 4)
	m, reader := f.monitor(t, "gone", 0)
	var l lag.PartitionLag
	for range 3 {
		l = update(t, m)
	}
	if l.Health.Status != lag.StatusStop || l.Members != 0 {
		t.Fatalf("entry %+v, want stop with no members", l)
	}
	if g := healthGauges(t, reader); g[otelnames.MetricLagStatus] != 3 {
		t.Fatalf("gauges %v, want status 3", g)
	}
}

// TestHealthRewind: committed offsets moved back with kadm CommitOffsets
// are REWIND (exported as 4).
func TestHealthRewind(t *testing.T) {
	f := newHealthFixture(t)
	m, reader := f.monitor(t, "rewound", 0)
	var l lag.PartitionLag
	for _, o := range []int64{8, 10, 3} {
		f.commit(t, "rewound", o)
		l = update(t, m)
	}
	if l.Health.Status != lag.StatusRewind || l.Committed != 3 {
		t.Fatalf("entry %+v, want rewind at 3", l)
	}
	if g := healthGauges(t, reader); g[otelnames.MetricLagStatus] != 4 {
		t.Fatalf("gauges %v, want status 4", g)
	}
}

// TestHealthWarnAndOK: a group that commits but falls behind the
// producer is WARN; once it drains, OK with a drain time, and OK when
// caught up.
func TestHealthWarnAndOK(t *testing.T) {
	f := newHealthFixture(t)
	m, reader := f.monitor(t, "slow", 0)
	var l lag.PartitionLag
	// Lag 8, 10, 12: committing 1 per measurement, 3 produced.
	for i := range 3 {
		if i > 0 {
			f.produce(t, 3, time.Now())
		}
		f.commit(t, "slow", int64(2+i))
		l = update(t, m)
	}
	if l.Health.Status != lag.StatusWarn || l.Records != 12 || l.Health.Velocity <= 0 {
		t.Fatalf("entry %+v, want warn with lag 12 growing", l)
	}
	if g := healthGauges(t, reader); g[otelnames.MetricLagStatus] != 1 || g[otelnames.MetricLagVelocity] <= 0 {
		t.Fatalf("gauges %v, want status 1, a positive velocity", g)
	}
	// Draining: lag 12 -> 8 -> 4 over the last three.
	for _, o := range []int64{8, 12} {
		f.commit(t, "slow", o)
		l = update(t, m)
	}
	if l.Health.Status != lag.StatusOK || l.Records != 4 || l.Health.Velocity >= 0 || l.Health.Drain <= 0 {
		t.Fatalf("draining entry %+v, want ok, a negative velocity, a drain time", l)
	}
	g := healthGauges(t, reader)
	if g[otelnames.MetricLagStatus] != 0 || g[otelnames.MetricLagDrain] != l.Health.Drain {
		t.Fatalf("gauges %v, want status 0 and drain %v", g, l.Health.Drain)
	}
	f.commit(t, "slow", 16)
	if l = update(t, m); l.Health.Status != lag.StatusOK || l.Records != 0 || l.Health.Drain != -1 {
		t.Fatalf("caught-up entry %+v, want ok with no drain", l)
	}
}

// TestHealthRetentionHeadroom: with the topic's retention.ms shortened
// (kadm AlterTopicConfigs) from infinite to an hour, the oldest
// unconsumed record, 55 minutes old, has about 5 minutes left: below a
// threshold of 10.
func TestHealthRetentionHeadroom(t *testing.T) {
	f := newHealthFixture(t)
	f.commit(t, "late", 2)
	m, reader := f.monitor(t, "late", time.Millisecond)
	if l := update(t, m); l.Health.HeadroomKnown {
		t.Fatalf("headroom %v with infinite retention", l.Health.Headroom)
	}
	resp, err := f.adm.AlterTopicConfigs(t.Context(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr(fmt.Sprint(time.Hour.Milliseconds()))}}, healthTopic)
	if err == nil {
		_, err = resp.On(healthTopic, nil)
	}
	if err != nil {
		t.Fatalf("alter retention.ms: %v", err)
	}
	const threshold = 600.0
	l := update(t, m)
	if !l.Health.HeadroomKnown || l.Health.Headroom >= threshold || l.Health.Headroom < 240 {
		t.Fatalf("headroom %v (known %v), want about 300 s, below %v", l.Health.Headroom, l.Health.HeadroomKnown, threshold)
	}
	if g := healthGauges(t, reader); g[otelnames.MetricRetentionHeadroom] != l.Health.Headroom {
		t.Fatalf("gauges %v, want headroom %v", g, l.Health.Headroom)
	}
	t.Logf("retention 3600 s, oldest unconsumed %.1f s old: headroom %.1f s", l.Seconds, l.Health.Headroom)
}
