// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/bench/relay"
	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/pathway"
)

// TestRelayTraceLinkage relays a few records with kretrieve's tracing at 100%
// and checks that every record is one trace from the producer's send span to
// the consumer's process span of topic B.
func TestRelayTraceLinkage(t *testing.T) {
	const n = 20
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })

	r := relay.New(t, brokertest.NewBroker(t, relay.Partitions).Addr(), relay.Kretrieve(tp, kafkatrace.NewMetrics(), false), n)
	if err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.Close() // no span is started once the worker and the consumer stop

	byName := map[string][]sdktrace.ReadOnlySpan{}
	spans := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
		spans[s.SpanContext().SpanID()] = s
	}
	for _, name := range []string{"send " + r.TopicA, "wait " + r.TopicA, "process " + r.TopicA, "send " + r.TopicB, "wait " + r.TopicB, "process " + r.TopicB} {
		if got := len(byName[name]); got != n {
			t.Errorf("%d %q spans, want %d", got, name, n)
		}
	}

	roots := map[trace.TraceID]bool{}
	for _, s := range byName["send "+r.TopicA] {
		if s.Parent().IsValid() {
			t.Errorf("producer send span has parent %v, want a root", s.Parent())
		}
		roots[s.SpanContext().TraceID()] = true
	}
	if len(roots) != n {
		t.Fatalf("%d distinct traces from the producer, want %d", len(roots), n)
	}
	for _, s := range byName["process "+r.TopicB] {
		// process B ← send B ← process A ← send A, all in the producer's trace.
		chain := []string{"send " + r.TopicB, "process " + r.TopicA, "send " + r.TopicA}
		cur := s
		for _, want := range chain {
			parent, ok := spans[cur.Parent().SpanID()]
			if !ok || parent.Name() != want {
				t.Fatalf("parent of %q is %v, want %q", cur.Name(), cur.Parent().SpanID(), want)
			}
			cur = parent
		}
		if !roots[s.SpanContext().TraceID()] || s.SpanContext().TraceID() != cur.SpanContext().TraceID() {
			t.Errorf("consumer process span in trace %v, not its producer's %v", s.SpanContext().TraceID(), cur.SpanContext().TraceID())
		}
		if links := s.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != s.Parent().SpanID() {
			t.Errorf("consumer process span links %v, want its send span", links)
		}
	}
}

// TestRelayPathways relays a few unsampled records with pathways on, as
// the kretrieve-0-pathways variant does, and checks that every record is
// measured at the relay's four checkpoints (producer out to A, worker in
// from A and out to B, consumer in from B) on one chained pathway, and
// that no span is started.
func TestRelayPathways(t *testing.T) {
	const n = 20
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0))), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	m := kafkatrace.NewMetrics()

	r := relay.New(t, brokertest.NewBroker(t, relay.Partitions).Addr(), relay.Kretrieve(tp, m, true), n)
	if err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.Close()

	if ended := len(rec.Ended()); ended != 0 {
		t.Errorf("%d spans ended at 0%% sampling", ended)
	}
	want := []pathway.Checkpoint{
		{Service: "relay-" + relay.RoleProducer, Topic: r.TopicA, Direction: pathway.Out},
		{Service: "relay-" + relay.RoleWorker, Group: relay.Group, Topic: r.TopicA, Direction: pathway.In},
		{Service: "relay-" + relay.RoleWorker, Group: relay.Group, Topic: r.TopicB, Direction: pathway.Out},
		{Service: "relay-" + relay.RoleConsumer, Topic: r.TopicB, Direction: pathway.In},
	}
	got := map[pathway.Checkpoint]kafkatrace.PathwayStats{}
	for _, s := range m.Pathways() {
		if _, dup := got[s.Checkpoint]; dup {
			t.Errorf("more than one pathway at %s", s.Checkpoint.Edge())
		}
		got[s.Checkpoint] = s
	}
	if len(got) != len(want) {
		t.Errorf("pathways at %d checkpoints, want %d: %+v", len(got), len(want), got)
	}
	var parent uint64
	for _, cp := range want {
		s, ok := got[cp]
		if !ok {
			t.Fatalf("no pathway at %s (%+v)", cp.Edge(), cp)
		}
		if s.Edge.Count != n || s.Origin.Count != n {
			t.Errorf("%s: %d edge and %d origin latencies, want %d", cp.Edge(), s.Edge.Count, s.Origin.Count, n)
		}
		if s.Parent != parent || s.Hash != pathway.Chain(parent, cp.ID()) {
			t.Errorf("%s: hash %x after %x, want the chain after %x", cp.Edge(), s.Hash, s.Parent, parent)
		}
		parent = s.Hash
	}
}
