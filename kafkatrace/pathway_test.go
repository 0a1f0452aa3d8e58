// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// hop is one service of a test pathway: a producer tracer and, for
// consumers, the consumer group.
func pathwayTracers(t *testing.T, m *Metrics, sampler sdktrace.Sampler) (gateway, worker *Tracer) {
	t.Helper()
	gateway, _ = newSampledTracer(t, sampler, WithMetrics(m), WithPathways("gw"), WithParentBasedSampling())
	worker, _ = newSampledTracer(t, sampler, WithMetrics(m), WithPathways("wk"), WithParentBasedSampling(), WithConsumerGroup("g"))
	return gateway, worker
}

func pathwayHeaders(r *kgo.Record) [][]byte {
	var out [][]byte
	for _, h := range r.Headers {
		if h.Key == pathway.HeaderKey {
			out = append(out, h.Value)
		}
	}
	return out
}

// produce runs r through tr's produce hooks, as franz-go does, returning
// the pathway context of its header.
func produce(t *testing.T, tr *Tracer, r *kgo.Record) pathway.Context {
	t.Helper()
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, nil)
	hs := pathwayHeaders(r)
	if len(hs) != 1 {
		t.Fatalf("%d pathway headers, want exactly one", len(hs))
	}
	pc, err := pathway.Decode(hs[0], time.Now().UnixNano())
	if err != nil {
		t.Fatalf("own header does not decode: %v", err)
	}
	return pc
}

// consumed returns r as a consumer fetches it: headers and timestamp.
func consumed(r *kgo.Record) *kgo.Record {
	return &kgo.Record{Topic: r.Topic, Partition: r.Partition, Value: r.Value, Headers: r.Headers, Timestamp: time.Now()}
}

func TestPathwayChainsAcrossHops(t *testing.T) {
	for _, sampler := range []sdktrace.Sampler{sdktrace.ParentBased(sdktrace.AlwaysSample()), sdktrace.ParentBased(sdktrace.NeverSample())} {
		m := NewMetrics()
		gw, wk := pathwayTracers(t, m, sampler)
		outGW := pathway.Checkpoint{Service: "gw", Topic: "req", Direction: pathway.Out}.ID()
		inWK := pathway.Checkpoint{Service: "wk", Group: "g", Topic: "req", Direction: pathway.In}.ID()
		outWK := pathway.Checkpoint{Service: "wk", Group: "g", Topic: "res", Direction: pathway.Out}.ID()

		before := time.Now().UnixNano()
		first := produce(t, gw, &kgo.Record{Topic: "req", Value: []byte("q")})
		if first.Hash != pathway.Chain(0, outGW) || first.Origin < before || first.Prev != first.Origin {
			t.Fatalf("first hop %+v", first)
		}

		in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: first.Append(nil)}}})
		ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
		pc, ok := PathwayFromContext(ctx)
		if !ok || pc.Hash != pathway.Chain(first.Hash, inWK) || pc.Origin != first.Origin || pc.Prev < first.Prev {
			t.Fatalf("in checkpoint %+v (%v)", pc, ok)
		}
		second := produce(t, wk, &kgo.Record{Topic: "res", Value: []byte("r"), Context: ctx})
		wk.EndProcess(ctx, in, qw.End, span, nil, "")
		if second.Hash != pathway.Chain(pc.Hash, outWK) || second.Origin != first.Origin || second.Prev < pc.Prev {
			t.Fatalf("second hop %+v", second)
		}

		// Every checkpoint is a series with its parent.
		got := map[string]PathwayStats{}
		for _, s := range m.Pathways() {
			got[s.Checkpoint.Edge()] = s
		}
		for edge, want := range map[string][2]uint64{
			"gw → req": {first.Hash, 0},
			"req → g":  {pc.Hash, first.Hash},
			"g → res":  {second.Hash, pc.Hash},
		} {
			s, ok := got[edge]
			if !ok || s.Hash != want[0] || s.Parent != want[1] || s.Edge.Count != 1 || s.Origin.Count != 1 {
				t.Errorf("edge %q: %+v (present %v), want hash %x parent %x and one sample", edge, s, ok, want[0], want[1])
			}
		}
	}
}

func TestPathwayLatenciesMeasured(t *testing.T) {
	m := NewMetrics()
	gw, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	now := time.Now()
	// A record whose pathway began 3 s ago and left its last checkpoint
	// 200 ms ago.
	hdr := pathway.Context{Hash: 99, Origin: now.Add(-3 * time.Second).UnixNano(), Prev: now.Add(-200 * time.Millisecond).UnixNano()}
	in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: hdr.Append(nil)}}})
	ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
	wk.EndProcess(ctx, in, qw.End, span, nil, "")
	_ = gw
	var s PathwayStats
	for _, p := range m.Pathways() {
		if p.Checkpoint.Direction == pathway.In {
			s = p
		}
	}
	edge, origin := s.Edge.Quantile(0.5), s.Origin.Quantile(0.5)
	if edge < 190*time.Millisecond || edge > 230*time.Millisecond {
		t.Errorf("edge latency %v, want about 200ms", edge)
	}
	if origin < 2900*time.Millisecond || origin > 3200*time.Millisecond {
		t.Errorf("latency from origin %v, want about 3s", origin)
	}
	if s.Parent != 99 {
		t.Errorf("parent %x", s.Parent)
	}
}

// TestHostilePathwayHeadersIgnored: a record with a pathway header that is
// garbage, the wrong length, from the far future or repeated is processed
// like any other and starts a new pathway at the checkpoint that sees it.
func TestHostilePathwayHeadersIgnored(t *testing.T) {
	now := time.Now()
	valid := pathway.Context{Hash: 5, Origin: now.Add(-time.Second).UnixNano(), Prev: now.UnixNano()}.Append(nil)
	future := pathway.Context{Hash: 5, Origin: now.Add(time.Hour).UnixNano(), Prev: now.Add(time.Hour).UnixNano()}.Append(nil)
	cases := map[string][]kgo.RecordHeader{
		"garbage":      {{Key: pathway.HeaderKey, Value: bytes.Repeat([]byte{0xa5}, pathway.Size)}},
		"wrong length": {{Key: pathway.HeaderKey, Value: valid[:20]}},
		"huge":         {{Key: pathway.HeaderKey, Value: make([]byte, 1<<20)}},
		"far future":   {{Key: pathway.HeaderKey, Value: future}},
		"repeated":     {{Key: pathway.HeaderKey, Value: valid}, {Key: pathway.HeaderKey, Value: valid}},
		"absent":       nil,
	}
	inWK := pathway.Checkpoint{Service: "wk", Group: "g", Topic: "req", Direction: pathway.In}.ID()
	for name, hs := range cases {
		t.Run(name, func(t *testing.T) {
			_, wk := pathwayTracers(t, NewMetrics(), sdktrace.ParentBased(sdktrace.AlwaysSample()))
			in := consumed(&kgo.Record{Topic: "req", Headers: hs})
			before := time.Now().UnixNano()
			ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
			if !span.IsRecording() {
				t.Fatal("record not processed (no process span)")
			}
			pc, ok := PathwayFromContext(ctx)
			if !ok || pc.Hash != pathway.Chain(0, inWK) || pc.Origin < before {
				t.Fatalf("pathway %+v (%v), want a new one starting here", pc, ok)
			}
			out := &kgo.Record{Topic: "res", Context: ctx}
			if got := produce(t, wk, out); got.Origin != pc.Origin {
				t.Fatalf("downstream origin %d, want %d", got.Origin, pc.Origin)
			}
			wk.EndProcess(ctx, in, qw.End, span, nil, "")
		})
	}
}

func TestPathwayHeaderReplacedNotRepeated(t *testing.T) {
	_, wk := pathwayTracers(t, NewMetrics(), sdktrace.ParentBased(sdktrace.NeverSample()))
	// A dead letter keeps the original headers, stale pathway included.
	r := &kgo.Record{Topic: "res", Headers: []kgo.RecordHeader{
		{Key: pathway.HeaderKey, Value: []byte("stale")},
		{Key: "kept", Value: []byte("x")},
		{Key: pathway.HeaderKey, Value: []byte("stale too")},
	}}
	produce(t, wk, r)
	var keys []string
	for _, h := range r.Headers {
		keys = append(keys, h.Key)
	}
	if strings.Join(keys, ",") != "kept,traceparent,"+pathway.HeaderKey {
		t.Fatalf("headers %v", keys)
	}
}

// TestPathwayHeaderCarriesNoUserData: the header is the same whatever the
// record's key, value and request.
func TestPathwayHeaderCarriesNoUserData(t *testing.T) {
	_, wk := pathwayTracers(t, NewMetrics(), sdktrace.ParentBased(sdktrace.NeverSample()))
	a := produce(t, wk, &kgo.Record{Topic: "res", Key: []byte("secret-key"), Value: []byte("secret query")})
	b := produce(t, wk, &kgo.Record{Topic: "res", Key: []byte("other"), Value: []byte("other")})
	if a.Hash != b.Hash {
		t.Fatal("hash depends on the record's content")
	}
	if pathway.Size != 25 {
		t.Fatalf("header of %d bytes: 1 version + 8 hash + 8 + 8 time, nothing else", pathway.Size)
	}
}

func TestPathwaysOffLeavesHeadersAlone(t *testing.T) {
	tr, _ := newSampledTracer(t, sdktrace.ParentBased(sdktrace.NeverSample()), WithParentBasedSampling(), WithConsumerGroup("g"))
	foreign := []byte("whatever a producer wrote")
	in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: foreign}}})
	ctx, span, qw := tr.StartProcess(context.Background(), in, -1)
	if _, ok := PathwayFromContext(ctx); ok {
		t.Fatal("pathway context without WithPathways")
	}
	tr.EndProcess(ctx, in, qw.End, span, nil, "")
	out := &kgo.Record{Topic: "res", Context: ctx}
	tr.OnProduceRecordBuffered(out)
	tr.OnProduceRecordUnbuffered(out, nil)
	if hs := pathwayHeaders(out); len(hs) != 0 {
		t.Fatalf("pathway header written without WithPathways: %q", hs)
	}
	if len(tr.metrics.Pathways()) != 0 {
		t.Fatal("pathway series without WithPathways")
	}
}

// TestRecordContextActsAsRemoteSpanContext: the allocation-free context of
// an unsampled record is what trace.ContextWithRemoteSpanContext would
// give, for the trace API and for the produce hooks.
func TestRecordContextActsAsRemoteSpanContext(t *testing.T) {
	if spanKey == nil {
		t.Fatal("the trace package's span key was not learnt: every unsampled record takes the allocating path")
	}
	_, wk := pathwayTracers(t, NewMetrics(), sdktrace.ParentBased(sdktrace.AlwaysSample()))
	in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte(unsampledParent)}}})
	type key struct{}
	base := context.WithValue(context.Background(), key{}, "kept")
	ctx, span, qw := wk.StartProcess(base, in, -1)
	if _, ok := ctx.(*recordContext); !ok {
		t.Fatalf("fast path not taken: %T", ctx)
	}
	want := trace.SpanContextFromContext(trace.ContextWithRemoteSpanContext(context.Background(), span.SpanContext()))
	if got := trace.SpanContextFromContext(ctx); !got.Equal(want) || !got.IsRemote() || got.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Fatalf("span context %v, want %v", got, want)
	}
	if trace.SpanFromContext(ctx).IsRecording() || ctx.Value(key{}) != "kept" {
		t.Fatal("context does not behave as its parent plus the remote span")
	}
	out := &kgo.Record{Topic: "res", Context: ctx}
	wk.OnProduceRecordBuffered(out)
	wk.OnProduceRecordUnbuffered(out, nil)
	if got := (tracecontext.HeaderCarrier{Record: out}).Get("traceparent"); got != unsampledParent {
		t.Fatalf("downstream traceparent %q", got)
	}
	wk.EndProcess(ctx, in, qw.End, span, nil, "")
	// Contexts from the slab are never shared between records.
	ctx2, span2, qw2 := wk.StartProcess(base, in, -1)
	if ctx2 == ctx {
		t.Fatal("a record context was reused")
	}
	wk.EndProcess(ctx2, in, qw2.End, span2, nil, "")
}

func TestPathwayCardinalityBounded(t *testing.T) {
	m := NewMetrics(WithMaxPathways(4))
	_, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	now := time.Now()
	for i := range 50 { // 50 distinct (hostile but valid) parent hashes
		hdr := pathway.Context{Hash: uint64(1000 + i), Origin: now.UnixNano(), Prev: now.UnixNano()}
		in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: hdr.Append(nil)}}})
		ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
		wk.EndProcess(ctx, in, qw.End, span, nil, "")
	}
	stats := m.Pathways()
	if len(stats) != 5 {
		t.Fatalf("%d series, want 4 and one overflow", len(stats))
	}
	var total uint64
	overflow := 0
	for _, s := range stats {
		total += s.Edge.Count
		if s.Hash == 0 {
			overflow++
			if s.Edge.Count != 46 {
				t.Errorf("overflow series has %d samples, want 46", s.Edge.Count)
			}
		}
	}
	if total != 50 || overflow != 1 {
		t.Fatalf("%d samples in all, %d overflow series", total, overflow)
	}
	// The overflow series is marked as the SDK marks its own.
	for _, s := range stats {
		for _, attrs := range []attribute.Set{s.EdgeAttrs, s.OriginAttrs} {
			_, isOverflow := attrs.Value(OverflowAttr)
			_, hasHash := attrs.Value(otelnames.PathwayHash)
			if isOverflow != (s.Hash == 0) || isOverflow == hasHash {
				t.Errorf("series of hash %x: attributes %v", s.Hash, attrs.ToSlice())
			}
		}
	}
}

func TestClockFollowsTimeNow(t *testing.T) {
	for range 50 {
		before := time.Now()
		got := clockNow()
		after := time.Now()
		// The wall reading lies between two time.Now calls up to the
		// rounding of the anchor arithmetic.
		if got.UnixNano() < before.UnixNano()-int64(time.Millisecond) || got.UnixNano() > after.UnixNano()+int64(time.Millisecond) {
			t.Fatalf("clockNow() = %v, outside [%v, %v]", got, before, after)
		}
		if d := time.Since(got); d < 0 || d > time.Second {
			t.Fatalf("monotonic reading off: since %v", d)
		}
	}
}

// TestRootSendSpanKeepsItsAttributes: a root send span under a
// parent-based sampler starts bare but, once sampled, carries the same
// attributes as any other send span.
func TestRootSendSpanKeepsItsAttributes(t *testing.T) {
	tr, rec := newSampledTracer(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), WithParentBasedSampling(), WithClientID("c"))
	r := &kgo.Record{Topic: "req", Key: []byte("k"), Value: []byte("v")}
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, nil)
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans", len(ended))
	}
	s := ended[0]
	if s.SpanKind() != trace.SpanKindProducer || s.Name() != "send req" || s.Parent().IsValid() {
		t.Fatalf("span %s kind %v parent %v", s.Name(), s.SpanKind(), s.Parent())
	}
	got := map[string]bool{}
	for _, kv := range s.Attributes() {
		got[string(kv.Key)] = true
	}
	for _, k := range []string{"messaging.system", "messaging.operation.type", "messaging.destination.name", "messaging.operation.name", "messaging.client.id", "messaging.message.body.size", string(otelnames.MessageKeyHash), "messaging.kafka.offset"} {
		if !got[k] {
			t.Errorf("root send span lacks %s: %v", k, got)
		}
	}
}

func TestNoMetricsWithoutOption(t *testing.T) {
	tr := New(WithPropagator(testPropagator()))
	r := &kgo.Record{Topic: "t"}
	tr.OnProduceRecordBuffered(r)
	tr.OnProduceRecordUnbuffered(r, nil) // must not panic without Metrics
	ctx, span, qw := tr.StartProcess(context.Background(), r, -1)
	tr.EndProcess(ctx, r, qw.End, span, nil, "")
}

// TestPathwayCohortsByOrigin: every checkpoint counts its records by the
// origin time of their pathway, for completeness: a record whose pathway
// began 3 min ago is counted in that origin's bin at the in checkpoint and
// at the out checkpoint that continues it, whatever the sampling.
func TestPathwayCohortsByOrigin(t *testing.T) {
	m := NewMetrics()
	_, wk := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	origin := time.Now().Add(-3 * time.Minute)
	hdr := pathway.Context{Hash: 99, Origin: origin.UnixNano(), Prev: origin.Add(time.Second).UnixNano()}
	for range 3 {
		in := consumed(&kgo.Record{Topic: "req", Headers: []kgo.RecordHeader{{Key: pathway.HeaderKey, Value: hdr.Append(nil)}}})
		ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
		produce(t, wk, &kgo.Record{Topic: "res", Value: []byte("r"), Context: ctx})
		wk.EndProcess(ctx, in, qw.End, span, nil, "")
	}
	bin := origin.Unix() - origin.Unix()%5
	for _, s := range m.Pathways() {
		c := s.Cohorts
		if len(c.Bins) != 1 || c.Bins[0].Bin != bin || c.Bins[0].Count != 3 || c.Older != 0 {
			t.Errorf("%s: cohorts %+v, want 3 records in the bin of %d", s.Checkpoint.Edge(), c, bin)
		}
	}
	if n := len(m.Pathways()); n != 2 {
		t.Errorf("%d series, want the in and the out checkpoint", n)
	}
}

// TestFailedProduceIsNotCounted: a record the broker never acknowledged
// (a produce error) is measured at its out checkpoint but not counted by
// origin time: it entered nothing, and ended nothing.
func TestFailedProduceIsNotCounted(t *testing.T) {
	m := NewMetrics()
	gw, _ := pathwayTracers(t, m, sdktrace.ParentBased(sdktrace.NeverSample()))
	ok := &kgo.Record{Topic: "req", Value: []byte("q")}
	produce(t, gw, ok)
	failed := &kgo.Record{Topic: "req", Value: []byte("q")}
	gw.OnProduceRecordBuffered(failed)
	gw.OnProduceRecordUnbuffered(failed, errors.New("NOT_ENOUGH_REPLICAS"))
	ps := m.Pathways()
	if len(ps) != 1 || ps[0].Edge.Count != 2 {
		t.Fatalf("series %+v, want one measuring both records", ps)
	}
	var n uint64
	for _, b := range ps[0].Cohorts.Bins {
		n += b.Count
	}
	if n != 1 {
		t.Errorf("%d records counted by origin, want the acknowledged one only", n)
	}
}
