// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/tracecontext"
)

// libraryTracer is a Tracer forced onto the library propagator, the
// reference the direct W3C codec must agree with.
func libraryTracer() *Tracer {
	tr := New(WithPropagator(testPropagator()))
	tr.w3c = false
	return tr
}

func TestInjectMatchesLibrary(t *testing.T) {
	fast, lib := New(WithPropagator(testPropagator())), libraryTracer()
	if !fast.w3c {
		t.Fatal("the W3C propagator was not detected")
	}
	ts, err := trace.ParseTraceState("vendor=abc,other=x-1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := baggage.NewMember("tenant", "a b")
	bg, _ := baggage.New(m)
	ids := trace.SpanContextConfig{TraceID: trace.TraceID{0xab, 1, 2, 0xff}, SpanID: trace.SpanID{0xcd, 9}}
	for name, ctx := range map[string]context.Context{
		"no span":   context.Background(),
		"sampled":   trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(withFlags(ids, trace.FlagsSampled))),
		"unsampled": trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(withFlags(ids, 0))),
		"random+sampled, state": trace.ContextWithSpanContext(context.Background(),
			trace.NewSpanContext(withFlags(ids, trace.FlagsSampled|trace.FlagsRandom)).WithTraceState(ts)),
		"baggage only": baggage.ContextWithBaggage(context.Background(), bg),
		"all": baggage.ContextWithBaggage(trace.ContextWithSpanContext(context.Background(),
			trace.NewSpanContext(withFlags(ids, trace.FlagsSampled)).WithTraceState(ts)), bg),
	} {
		t.Run(name, func(t *testing.T) {
			a := &kgo.Record{Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("stale")}, {Key: "x", Value: []byte("1")}}}
			b := &kgo.Record{Headers: slices.Clone(a.Headers)}
			fast.Inject(ctx, a)
			lib.Inject(ctx, b)
			for _, k := range []string{"traceparent", "tracestate", "baggage", "x"} {
				if got, want := headerValues(a, k), headerValues(b, k); !slices.Equal(got, want) {
					t.Errorf("%s: direct %q, library %q", k, got, want)
				}
			}
		})
	}
}

func withFlags(c trace.SpanContextConfig, f trace.TraceFlags) trace.SpanContextConfig {
	c.TraceFlags = f
	return c
}

// extractBoth extracts with the direct codec and with the library.
func extractBoth(headers []kgo.RecordHeader) (fast, lib context.Context) {
	r := &kgo.Record{Headers: headers}
	return New(WithPropagator(testPropagator())).Extract(context.Background(), r),
		libraryTracer().Extract(context.Background(), r)
}

func sameExtraction(t *testing.T, headers []kgo.RecordHeader) {
	t.Helper()
	fast, lib := extractBoth(headers)
	a, b := trace.SpanContextFromContext(fast), trace.SpanContextFromContext(lib)
	if !a.Equal(b) || a.IsRemote() != b.IsRemote() {
		t.Fatalf("headers %q: direct %v (state %q), library %v (state %q)", headers, a, a.TraceState(), b, b.TraceState())
	}
	if ba, bb := baggageMembers(fast), baggageMembers(lib); !slices.Equal(ba, bb) {
		t.Fatalf("headers %q: direct baggage %q, library %q", headers, ba, bb)
	}
}

// baggageMembers returns ctx's baggage members, sorted: Baggage.String
// lists them in map order.
func baggageMembers(ctx context.Context) []string {
	var ms []string
	for _, m := range baggage.FromContext(ctx).Members() {
		ms = append(ms, m.String())
	}
	slices.Sort(ms)
	return ms
}

var extractSeeds = []struct{ traceparent, tracestate, baggage string }{
	{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "", ""},
	{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", "a=1,b=2", "k=v"},
	{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03", "bad state", "bad baggage;;"},
	{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-04", "", ""},
	{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future", "", ""},
	{"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "", ""},
	{"00-00000000000000000000000000000000-b7ad6b7169203331-01", "", ""},
	{"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "", ""},
	{"00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01", "", ""},
	{"00x0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "", ""},
	{"", "a=1", "k=v"},
}

func TestExtractMatchesLibrary(t *testing.T) {
	for _, s := range extractSeeds {
		sameExtraction(t, headersOf(s.traceparent, s.tracestate, s.baggage))
	}
}

// FuzzExtract checks that the direct traceparent codec and the library's
// propagator agree on every input, that nothing panics, and that what is
// extracted stays within the W3C limits, whatever the headers' sizes.
func FuzzExtract(f *testing.F) {
	for _, s := range extractSeeds {
		f.Add(s.traceparent, s.tracestate, s.baggage)
	}
	f.Fuzz(func(t *testing.T, traceparent, tracestate, bg string) {
		hs := headersOf(traceparent, tracestate, bg)
		sameExtraction(t, hs)
		ctx := New(WithPropagator(testPropagator())).Extract(context.Background(), &kgo.Record{Headers: hs})
		if ts := trace.SpanContextFromContext(ctx).TraceState(); ts.Len() > tracecontext.MaxTraceStateMembers || len(ts.String()) > tracecontext.MaxTraceStateLen {
			t.Fatalf("tracestate of %d members, %d characters", ts.Len(), len(ts.String()))
		}
		if b := baggage.FromContext(ctx); b.Len() > tracecontext.MaxBaggageMembers || len(bg) > tracecontext.MaxBaggageBytes && b.Len() > 0 {
			t.Fatalf("baggage of %d members from %d bytes", b.Len(), len(bg))
		}
	})
}

func headersOf(traceparent, tracestate, bg string) []kgo.RecordHeader {
	var hs []kgo.RecordHeader
	for _, h := range [][2]string{{"traceparent", traceparent}, {"tracestate", tracestate}, {"baggage", bg}} {
		if h[1] != "" {
			hs = append(hs, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
		}
	}
	return hs
}
