// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/tracecontext"
)

// injectCases are the contexts Inject is compared on with the library:
// a span context alone, with a tracestate, and with baggage too.
func injectCases(tb testing.TB) map[string]context.Context {
	tb.Helper()
	ts, err := trace.ParseTraceState("vendor=abc,other=x-1")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := baggage.NewMember("tenant", "a")
	if err != nil {
		tb.Fatal(err)
	}
	bg, err := baggage.New(m)
	if err != nil {
		tb.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xab, 1}, SpanID: trace.SpanID{0xcd}, TraceFlags: trace.FlagsSampled})
	span := trace.ContextWithSpanContext(context.Background(), sc)
	state := trace.ContextWithSpanContext(context.Background(), sc.WithTraceState(ts))
	return map[string]context.Context{
		"span":               span,
		"span+state":         state,
		"span+state+baggage": baggage.ContextWithBaggage(state, bg),
	}
}

// libraryInject is what a franz-go user gets from the OTel library: the
// W3C trace context and baggage propagators writing through a header
// carrier.
var libraryInject = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// TestInjectAllocatesNoMoreThanLibrary: Tracer.Inject into a new record
// allocates no more than the library's propagators injecting into the same
// record through a tracecontext.HeaderCarrier (record allocation included
// on both sides), and writes the same headers.
func TestInjectAllocatesNoMoreThanLibrary(t *testing.T) {
	tr := New(WithPropagator(testPropagator()))
	for name, ctx := range injectCases(t) {
		t.Run(name, func(t *testing.T) {
			ours := testing.AllocsPerRun(1000, func() { tr.Inject(ctx, &kgo.Record{}) })
			lib := testing.AllocsPerRun(1000, func() {
				libraryInject.Inject(ctx, tracecontext.HeaderCarrier{Record: &kgo.Record{}})
			})
			t.Logf("allocations per Inject: kretrieve %v, library %v", ours, lib)
			if ours > lib {
				t.Errorf("Tracer.Inject allocates %v times, the library %v", ours, lib)
			}
			a, b := &kgo.Record{}, &kgo.Record{}
			tr.Inject(ctx, a)
			libraryInject.Inject(ctx, tracecontext.HeaderCarrier{Record: b})
			for _, k := range []string{tracecontext.TraceparentHeader, tracecontext.TracestateHeader, tracecontext.BaggageHeader} {
				if got, want := headerValues(a, k), headerValues(b, k); len(got) != len(want) || (len(got) == 1 && got[0] != want[0]) {
					t.Errorf("%s: kretrieve %q, library %q", k, got, want)
				}
			}
		})
	}
}

// BenchmarkInject compares Tracer.Inject with the library's propagators
// (TraceContext and Baggage through a tracecontext.HeaderCarrier), each
// into a new record, per context of injectCases.
func BenchmarkInject(b *testing.B) {
	tr := New(WithPropagator(testPropagator()))
	for name, ctx := range injectCases(b) {
		b.Run(name+"/kretrieve", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr.Inject(ctx, &kgo.Record{})
			}
		})
		b.Run(name+"/library", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				libraryInject.Inject(ctx, tracecontext.HeaderCarrier{Record: &kgo.Record{}})
			}
		})
	}
}
