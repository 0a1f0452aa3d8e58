package bench

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// TestRelayTraceLinkage relays a few records with kretrieve's tracing at 100%
// and checks that every record is one trace from the producer's send span to
// the consumer's process span of topic B.
func TestRelayTraceLinkage(t *testing.T) {
	const n = 20
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })

	r := newRelay(t, kretrieveInstrumentation(tp, kafkatrace.NewMetrics()), n)
	if err := r.run(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.close() // no span is started once the worker and the consumer stop

	byName := map[string][]sdktrace.ReadOnlySpan{}
	spans := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
		spans[s.SpanContext().SpanID()] = s
	}
	for _, name := range []string{"send " + r.topicA, "wait " + r.topicA, "process " + r.topicA, "send " + r.topicB, "wait " + r.topicB, "process " + r.topicB} {
		if got := len(byName[name]); got != n {
			t.Errorf("%d %q spans, want %d", got, name, n)
		}
	}

	roots := map[trace.TraceID]bool{}
	for _, s := range byName["send "+r.topicA] {
		if s.Parent().IsValid() {
			t.Errorf("producer send span has parent %v, want a root", s.Parent())
		}
		roots[s.SpanContext().TraceID()] = true
	}
	if len(roots) != n {
		t.Fatalf("%d distinct traces from the producer, want %d", len(roots), n)
	}
	for _, s := range byName["process "+r.topicB] {
		// process B ← send B ← process A ← send A, all in the producer's trace.
		chain := []string{"send " + r.topicB, "process " + r.topicA, "send " + r.topicA}
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
