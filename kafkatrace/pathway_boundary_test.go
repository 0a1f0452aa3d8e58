// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/pathway"
)

// TestTrustBoundaryRestartsPathways: at a trust boundary a record's
// pathway header counts for nothing, as its trace context does: the
// pathway starts afresh at the boundary's checkpoint, so a producer can
// neither claim an origin a month old nor spread hashes of its choosing
// (issue 25, item 11).
func TestTrustBoundaryRestartsPathways(t *testing.T) {
	m := NewMetrics()
	wk, _ := newSampledTracer(t, sdktrace.AlwaysSample(), WithMetrics(m), WithPathways("wk"), WithConsumerGroup("g"), WithTrustBoundary())
	now := time.Now()
	old := now.Add(-29 * 24 * time.Hour).UnixNano()
	hdr := pathway.Context{Hash: 0xbad, Origin: old, Prev: old}
	in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: hdr.Append(nil)}}})
	before := time.Now().UnixNano()
	ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
	pc, ok := PathwayFromContext(ctx)
	wk.EndProcess(ctx, in, qw.End, span, nil, "")
	inWK := pathway.Checkpoint{Service: "wk", Group: "g", Topic: "req", Direction: pathway.In}.ID()
	if !ok || pc.Hash != pathway.Chain(0, inWK) || pc.Origin < before {
		t.Errorf("pathway %+v, want a new one starting at the boundary", pc)
	}
	for _, s := range m.Pathways() {
		if s.Parent != 0 || s.Origin.Quantile(1) > time.Minute || s.Edge.Quantile(1) > time.Minute {
			t.Errorf("series %x (parent %x): edge %s, origin %s: the producer's header was trusted", s.Hash, s.Parent, s.Edge.Quantile(1), s.Origin.Quantile(1))
		}
	}
}

// TestPathwaySeriesRecover: series that have measured nothing for
// PathwayIdle make room for new pathways, so that a burst of hostile
// hashes does not push real traffic into the overflow series for good
// (issue 25, item 11).
func TestPathwaySeriesRecover(t *testing.T) {
	m := NewMetrics(WithMaxPathways(4), WithPathwayIdle(time.Minute))
	_, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	at := time.Now()
	send := func(parent uint64, at time.Time) {
		hdr := pathway.Context{Hash: parent, Origin: at.UnixNano(), Prev: at.UnixNano()}
		in := &kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: hdr.Append(nil)}}, Timestamp: at}
		wk.processAt(context.Background(), in, at)
	}
	for i := range 400 { // a burst of random hashes fills the bound
		send(uint64(1000+i), at)
	}
	// Two minutes later, real traffic.
	later := at.Add(2 * time.Minute)
	for range 10 {
		send(7, later)
	}
	for _, s := range m.Pathways() {
		if s.Hash == 0 && s.Parent == 0 && s.Edge.Count > 396 {
			t.Errorf("overflow series holds %d records: the real pathway found no series", s.Edge.Count)
		}
		if s.Parent == 7 && s.Edge.Count != 10 {
			t.Errorf("the real pathway's series holds %d records, want 10", s.Edge.Count)
		}
	}
	real := false
	for _, s := range m.Pathways() {
		real = real || s.Parent == 7
	}
	if !real {
		t.Errorf("no series for the real pathway: %d series", len(m.Pathways()))
	}
}

// processAt takes r's in checkpoint at the given time, as StartProcess
// does at the time it reads.
func (t *Tracer) processAt(_ context.Context, r *kgo.Record, at time.Time) {
	t.checkpointIn(t.partition(r.Topic, r.Partition), r, at, 0, trace.SpanContext{})
}
