// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/testutil/w3ctest"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/tracecontext"
)

func TestExtractEnforcesLimits(t *testing.T) {
	bag := func(n int) string {
		ms := make([]string, n)
		for i := range ms {
			ms[i] = fmt.Sprintf("key%d=value%d", i, i)
		}
		return strings.Join(ms, ",")
	}
	big := strings.Repeat("k=v,", tracecontext.MaxBaggageBytes/4) + "k=v"
	for _, tc := range []struct {
		name               string
		tracestate, bg     string
		wantState          string
		wantBaggageMembers int
	}{
		{"within limits", "a=1,b=2", "k=v", "a=1,b=2", 1},
		{"tracestate of 33 members cut to 32 (the library would drop it)", strings.Join(w3ctest.Members(33, 0, 5), ","), "", strings.Join(w3ctest.Members(32, 0, 5), ","), 0},
		{"tracestate of 1 MiB dropped, traceparent kept", "big=" + strings.Repeat("x", 1<<20), "", "", 0},
		{"baggage of 64 members kept", "", bag(64), "", 64},
		{"baggage of 65 members: the first 64 kept", "", bag(65), "", 64},
		{"baggage of 8192 bytes kept", "", big[:tracecontext.MaxBaggageBytes-1] + "v", "", 1},
		{"baggage over 8192 bytes dropped, traceparent kept", "", big, "", 0},
		{"baggage of 100 KB dropped", "", strings.Repeat("k=v,", 25_000), "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := headersOf(w3ctest.Traceparent, tc.tracestate, tc.bg)
			sameExtraction(t, hs) // the direct codec and the library fallback alike
			ctx := New(WithPropagator(testPropagator())).Extract(context.Background(), &kgo.Record{Headers: hs})
			sc := trace.SpanContextFromContext(ctx)
			if !sc.IsValid() || sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
				t.Fatalf("lost the traceparent: %v", sc)
			}
			if got := sc.TraceState().String(); got != tc.wantState {
				t.Fatalf("tracestate %.80q…, want %.80q…", got, tc.wantState)
			}
			if got := baggage.FromContext(ctx).Len(); got != tc.wantBaggageMembers {
				t.Fatalf("%d baggage members, want %d", got, tc.wantBaggageMembers)
			}
			if tc.wantBaggageMembers == 64 {
				b := baggage.FromContext(ctx)
				if b.Member("key0").Value() != "value0" || b.Member("key63").Value() != "value63" || b.Member("key64").Key() != "" {
					t.Fatalf("not the first 64 members: %s", b)
				}
			}
		})
	}
}

func TestExtractOversizedTraceparentIgnored(t *testing.T) {
	r := &kgo.Record{Headers: headersOf(w3ctest.Traceparent[:53]+"-"+strings.Repeat("a", tracecontext.MaxTraceparentLen), "", "")}
	if sc := trace.SpanContextFromContext(libraryTracer().Extract(context.Background(), r)); sc.IsValid() {
		t.Fatalf("extracted %v from a %d-byte traceparent", sc, len(r.Headers[0].Value))
	}
	// A later version within the limit is still read, by the library.
	r = &kgo.Record{Headers: headersOf("01"+w3ctest.Traceparent[2:]+"-future", "", "")}
	if sc := trace.SpanContextFromContext(New(WithPropagator(testPropagator())).Extract(context.Background(), r)); !sc.IsValid() {
		t.Fatal("version 01 traceparent not read")
	}
}

// TestExtractDuplicateHeadersLastWins: of 1,000 headers with each W3C key,
// the last one counts, and extraction costs no more allocations than with
// one of each.
func TestExtractDuplicateHeadersLastWins(t *testing.T) {
	var hs []kgo.RecordHeader
	for i := range 1000 {
		hs = append(hs,
			kgo.RecordHeader{Key: "traceparent", Value: fmt.Appendf(nil, "00-%032x-b7ad6b7169203331-01", i+1)},
			kgo.RecordHeader{Key: "tracestate", Value: fmt.Appendf(nil, "v=%d", i)},
			kgo.RecordHeader{Key: "baggage", Value: fmt.Appendf(nil, "n=%d", i)},
		)
	}
	r := &kgo.Record{Headers: hs}
	sameExtraction(t, hs)
	tr := New(WithPropagator(testPropagator()))
	ctx := tr.Extract(context.Background(), r)
	sc := trace.SpanContextFromContext(ctx)
	if got := sc.TraceID().String(); got != fmt.Sprintf("%032x", 1000) {
		t.Fatalf("trace id %s, want the last header's", got)
	}
	if sc.TraceState().String() != "v=999" || baggage.FromContext(ctx).Member("n").Value() != "999" {
		t.Fatalf("tracestate %q baggage %q: want the last headers'", sc.TraceState(), baggage.FromContext(ctx))
	}

	one := &kgo.Record{Headers: hs[len(hs)-3:]}
	want := testing.AllocsPerRun(100, func() { tr.Extract(context.Background(), one) })
	if got := testing.AllocsPerRun(100, func() { tr.Extract(context.Background(), r) }); got > want {
		t.Fatalf("%v allocations with 3,000 headers, %v with 3", got, want)
	}
}

// or dropped without losing a valid traceparent.
func TestStartProcessUntrustedHeaders(t *testing.T) {
	for _, tc := range []struct {
		name        string
		headers     []kgo.RecordHeader
		parented    bool
		invalidAttr bool
	}{
		{"version ff", headersOf("ff"+w3ctest.Traceparent[2:], "", ""), false, true},
		{"all-zero trace id", headersOf("00-00000000000000000000000000000000-b7ad6b7169203331-01", "", ""), false, true},
		{"all-zero span id", headersOf("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "", ""), false, true},
		{"uppercase hex", headersOf(strings.ToUpper(w3ctest.Traceparent), "", ""), false, true},
		{"short trace id", headersOf("00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01", "", ""), false, true},
		{"long span id", headersOf("00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333100-01", "", ""), false, true},
		{"1 MiB traceparent", headersOf(w3ctest.Traceparent+strings.Repeat("-0", 1<<19), "", ""), false, true},
		{"1 MiB tracestate", headersOf(w3ctest.Traceparent, "big="+strings.Repeat("x", 1<<20), ""), true, false},
		{"100 KB baggage", headersOf(w3ctest.Traceparent, "", strings.Repeat("k=v,", 25_000)), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, rec := newTestTracer(t)
			r := &kgo.Record{Topic: "t", Timestamp: time.Now(), Headers: tc.headers}
			ctx, span, _ := tr.StartProcess(context.Background(), r, -1)
			EndProcess(span, nil, "")
			if len(rec.Ended()) != 2 {
				t.Fatalf("%d spans ended, want wait and process", len(rec.Ended()))
			}
			process := rec.Ended()[1]
			if got := process.Parent().IsValid(); got != tc.parented {
				t.Fatalf("parented %v, want %v", got, tc.parented)
			}
			if tc.parented && process.SpanContext().TraceID().String() != w3ctest.Traceparent[3:35] {
				t.Fatalf("trace %v, want the record's", process.SpanContext().TraceID())
			}
			if _, got := attrMap(process.Attributes())[string(otelnames.TraceContextInvalid)]; got != tc.invalidAttr {
				t.Fatalf("%s set: %v, want %v", otelnames.TraceContextInvalid, got, tc.invalidAttr)
			}
			if sc := trace.SpanContextFromContext(ctx); sc.TraceState().Len() != 0 || baggage.FromContext(ctx).Len() != 0 {
				t.Fatalf("handler context kept state %q baggage %q", sc.TraceState(), baggage.FromContext(ctx))
			}
		})
	}
}

// FuzzLimitTraceState checks the tracestate cut on any input: within the
