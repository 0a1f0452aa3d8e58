// SPDX-License-Identifier: Apache-2.0

package lag_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/otelnames"
)

// point is one gauge data point, keyed by group/partition.
type point[N int64 | float64] struct {
	value N
	attrs attribute.Set
}

// collect returns the lag gauges' data points (records and seconds) by "group/partition" and the
// gauges' units.
func collect(t *testing.T, r sdkmetric.Reader) (map[string]point[int64], map[string]point[float64], map[string]string) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	records, seconds, units := map[string]point[int64]{}, map[string]point[float64]{}, map[string]string{}
	key := func(s attribute.Set) string {
		g, _ := s.Value("messaging.consumer.group.name")
		p, _ := s.Value("messaging.destination.partition.id")
		return g.AsString() + "/" + p.AsString()
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != lag.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			units[m.Name] = m.Unit
			if m.Name != otelnames.MetricLagRecords && m.Name != otelnames.MetricLagSeconds {
				continue // the health gauges: collectHealth
			}
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					records[key(dp.Attributes)] = point[int64]{dp.Value, dp.Attributes}
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					seconds[key(dp.Attributes)] = point[float64]{dp.Value, dp.Attributes}
				}
			default:
				t.Fatalf("metric %s is a %T, want a gauge", m.Name, m.Data)
			}
		}
	}
	return records, seconds, units
}

func TestMonitorExportsLagGauges(t *testing.T) {
	f := newFixture(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	var logs syncbuf.Buffer
	m, err := lag.NewMonitor(f.opts, lag.MonitorConfig{Groups: []string{"orders", "audit", "nope"}, Interval: time.Hour},
		lag.WithMeterProvider(mp), lag.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if r, s, _ := collect(t, reader); len(r)+len(s) != 0 {
		t.Fatalf("gauges report before the first measurement: %v %v", r, s)
	}

	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	before := time.Now()
	go func() { ran <- m.Run(ctx) }()
	// Run measures at once; the interval (an hour) never elapses here.
	require.Eventually(t, func() bool { return m.Last() != nil }, 20*time.Second, 10*time.Millisecond)
	after := time.Now()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "group=nope") }, 5*time.Second, 10*time.Millisecond)
	// A group nobody has committed in is no failure (issue 14): info, no
	// warning.
	if l := logs.String(); strings.Contains(l, "level=WARN") || !strings.Contains(l, "level=INFO msg=\"consumer group has no commits yet") {
		t.Errorf("log of the unknown group:\n%s", l)
	}

	records, seconds, units := collect(t, reader)
	if units[otelnames.MetricLagRecords] != "{message}" || units[otelnames.MetricLagSeconds] != "s" {
		t.Errorf("units %v", units)
	}
	// The unknown group's error entry is not reported; every partition of
	// the other groups is, the fully consumed one with 0 and 0.
	if len(records) != len(fixtureLag) || len(seconds) != len(fixtureLag) {
		t.Fatalf("data points: records %v seconds %v, want %d each", records, seconds, len(fixtureLag))
	}
	for _, w := range fixtureLag {
		k := fmt.Sprintf("%s/%d", w.group, w.partition)
		r, s := records[k], seconds[k]
		if r.value != w.records {
			t.Errorf("%s: %s = %d, want %d", k, otelnames.MetricLagRecords, r.value, w.records)
		}
		wantAttrs := attribute.NewSet(
			attribute.String("messaging.system", "kafka"),
			attribute.String("messaging.consumer.group.name", w.group),
			attribute.String("messaging.destination.name", testTopic),
			attribute.String("messaging.destination.partition.id", fmt.Sprint(w.partition)),
		)
		if !r.attrs.Equals(&wantAttrs) || !s.attrs.Equals(&wantAttrs) {
			t.Errorf("%s: attributes %v and %v, want %v", k, r.attrs.Encoded(attribute.DefaultEncoder()), s.attrs.Encoded(attribute.DefaultEncoder()), wantAttrs.Encoded(attribute.DefaultEncoder()))
		}
		if w.oldest < 0 {
			if s.value != 0 {
				t.Errorf("%s: %s = %v, want 0", k, otelnames.MetricLagSeconds, s.value)
			}
			continue
		}
		ts := f.at(w.oldest)
		if lo, hi := before.Sub(ts).Seconds(), after.Sub(ts).Seconds(); s.value < lo-1e-6 || s.value > hi+1e-6 {
			t.Errorf("%s: %s = %.3f, want between %.3f and %.3f", k, otelnames.MetricLagSeconds, s.value, lo, hi)
		}
	}

	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if r, s, _ := collect(t, reader); len(r)+len(s) != 0 {
		t.Fatalf("gauges report after Close: %v %v", r, s)
	}
}

// TestMonitorLagNotReportedAfterFailure: once a measurement fails, the
// previous values are no longer exported.
func TestMonitorLagNotReportedAfterFailure(t *testing.T) {
	f := newFixture(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := lag.NewMonitor(f.opts, lag.MonitorConfig{Groups: []string{"orders"}}, lag.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := collect(t, reader); r["orders/0"].value != 6 {
		t.Fatalf("orders/0 = %d, want 6", r["orders/0"].value)
	}

	f.broker.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := m.Update(ctx); err == nil {
		t.Fatal("measurement without a broker succeeded")
	}
	if m.Last() != nil {
		t.Fatalf("Last after a failed measurement: %+v", m.Last())
	}
	if r, s, _ := collect(t, reader); len(r)+len(s) != 0 {
		t.Fatalf("stale values exported: %v %v", r, s)
	}
}

func TestNewMonitorLagRejectsNegativeInterval(t *testing.T) {
	if _, err := lag.NewMonitor(nil, lag.MonitorConfig{Groups: []string{"g"}, Interval: -time.Second}); err == nil {
		t.Fatal("negative interval accepted")
	}
}

// TestMonitorFreshGroupIsNoWarning: a group nobody has committed in yet
// (GROUP_ID_NOT_FOUND, as on every fresh worker) is logged once at info,
// not as a warning at each measurement.
func TestMonitorFreshGroupIsNoWarning(t *testing.T) {
	f := newFixture(t)
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m, err := lag.NewMonitor(f.opts, lag.MonitorConfig{Groups: []string{"orders", "fresh"}, Interval: 20 * time.Millisecond}, lag.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_ = m.Run(ctx)
	out := logs.String()
	if strings.Contains(out, "level=WARN") || strings.Count(out, "consumer group has no commits yet") != 1 || !strings.Contains(out, "group=fresh") {
		t.Fatalf("logs:\n%s", out)
	}
}
