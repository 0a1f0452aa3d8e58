// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/otelnames"
)

// TestRegisterUnfinishedObservesWhereRequestsWait: one point per place,
// one for the requests whose place is not known, none when the status
// could not be read, and 0 for every earlier place once its requests
// ended (a series that merely stopped keeps its last value in
// Prometheus, and its alert would not resolve).
func TestRegisterUnfinishedObservesWhereRequestsWait(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ok := true
	c := Completeness{Unfinished: 10, Waiting: []Waiting{newWaiting("retrieval.candidates", "enrichment", true), newWaiting("retrieval.candidates", "enrichment", false)}}
	c.Waiting[0].Count, c.Waiting[1].Count = 6, 1
	reg, err := RegisterUnfinished(mp, func(context.Context) (Completeness, bool) { return c, ok })
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	collect := func() map[string]int64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != otelnames.MetricRequestsUnfinished || m.Unit != "{request}" {
					continue
				}
				for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
					edge, _ := dp.Attributes.Value(otelnames.PathwayEdge)
					out[edge.AsString()] = dp.Value
				}
			}
		}
		return out
	}
	got := collect()
	want := map[string]int64{"retrieval.candidates → enrichment": 6, "in enrichment": 1, UnknownPlace: 3}
	if len(got) != len(want) {
		t.Fatalf("points %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	ok = false
	if got := collect(); len(got) != 0 {
		t.Errorf("a failed read observed %v", got)
	}
	ok, c = true, Completeness{}
	got = collect()
	if len(got) != len(want) {
		t.Fatalf("after the requests ended: points %v, want every earlier place at 0", got)
	}
	for k, v := range got {
		if v != 0 {
			t.Errorf("after the requests ended: %s = %d, want 0", k, v)
		}
	}
}
