// SPDX-License-Identifier: Apache-2.0

package docfeed_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/otelnames"
)

// TestApplyLagIsMeasuredAndExported: a follower measures its apply lag at
// start, on catching up and every LagInterval, reports it in its Status
// and exports it as the
// kretrieve.index.lag gauges by partition and index name: nothing left to
// apply once it has caught up with what was published.
func TestApplyLagIsMeasuredAndExported(t *testing.T) {
	e := newEnv(t, 2)
	e.upsert(0, docs("a", 50, "first")...)
	e.upsert(1, docs("b", 20, "first")...)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(noop.NewTracerProvider()), kafkatrace.WithConsumerGroup("retrieval"))
	f, err := docfeed.New(t.Context(), docfeed.Config{Topic: topic, Name: "retrieval", LagInterval: time.Hour}, tracer,
		[]kgo.Opt{kgo.SeedBrokers(e.addr)}, docfeed.WithLogger(slog.New(slog.DiscardHandler)), docfeed.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Status(); s.Lag.Records != nil || s.Lag.Seconds != nil {
		t.Errorf("lag before any measurement: %+v, want unknown", s.Lag)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		_ = f.Close()
	}()
	if err := f.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Measured at start (70 records behind, or fewer) and again on
	// catching up, not an interval (an hour) later.
	poll.Until(t, 10*time.Second, func() bool {
		l := f.Status().Lag
		return l.Records != nil && *l.Records == 0 && l.Seconds != nil && *l.Seconds == 0
	}, "a measured lag of 0 records and 0 s once caught up: %+v", f.Status().Lag)
	if at := f.Status().Lag.Measured; time.Since(at) > time.Minute || time.Since(at) < 0 {
		t.Errorf("lag measured at %v, want moments ago", at)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			g, ok := m.Data.(metricdata.Gauge[int64])
			if m.Name != otelnames.MetricIndexLagRecords || !ok {
				continue
			}
			for _, dp := range g.DataPoints {
				name, _ := dp.Attributes.Value(attribute.Key("kretrieve.index.name"))
				part, _ := dp.Attributes.Value(attribute.Key("messaging.destination.partition.id"))
				got[name.AsString()+"/"+part.AsString()] = dp.Value
			}
		}
	}
	if len(got) != 2 || got["retrieval/0"] != 0 || got["retrieval/1"] != 0 {
		t.Errorf("%s data points %v, want 0 for retrieval/0 and retrieval/1", otelnames.MetricIndexLagRecords, got)
	}
}
