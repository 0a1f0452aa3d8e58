package kafkatrace

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/telemetry"
)

const validTraceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// members returns n tracestate members "k<i>=<value>" with values padded
// to width characters.
func members(n, from, width int) []string {
	out := make([]string, n)
	for i := range out {
		m := fmt.Sprintf("k%d=", from+i)
		out[i] = m + strings.Repeat("v", max(width-len(m), 1))
	}
	return out
}

func TestLimitTraceState(t *testing.T) {
	join := func(ms ...[]string) string {
		var all []string
		for _, m := range ms {
			all = append(all, m...)
		}
		return strings.Join(all, ",")
	}
	fits := join(members(32, 0, 15)) // 32 members, 511 characters
	if len(fits) != 511 {
		t.Fatalf("fixture is %d characters", len(fits))
	}
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"within limits, untouched", "a=1, b=2 ,,c=3", "a=1, b=2 ,,c=3"},
		{"32 members in 511 characters, untouched", fits, fits},
		{"33 members: the last one goes", join(members(33, 0, 5)), join(members(32, 0, 5))},
		{"over 512 characters: members cut from the end", join(members(40, 0, 20)), join(members(24, 0, 20))},
		{"members over 128 characters go first", join(members(2, 0, 10), []string{"big=" + long}, members(30, 2, 10)), join(members(32, 0, 10))},
		{"only whole members: a cut one is dropped", join(members(5, 0, 100), members(1, 5, 100)), join(members(5, 0, 100))},
		{"empty members and whitespace dropped when cutting", " a=1 ,,\t,b=2," + strings.Repeat(",", 40), "a=1,b=2"},
		{"one member of 1 MiB", "big=" + strings.Repeat("x", 1<<20), ""},
		{"1 MiB of members: the first that fit", join(members(1<<15, 0, 32)), join(members(15, 0, 32))},
		{"a valid member after a huge one is beyond the scan", "big=" + strings.Repeat("x", MaxTraceStateScan) + ",a=1", ""},
		{"member ending exactly at the scan limit is kept", strings.Repeat(",", MaxTraceStateScan-4) + "a=1" + "," + strings.Repeat("x", 600), "a=1"},
		{"member cut by the scan limit is dropped", strings.Repeat(",", MaxTraceStateScan-4) + "a=12" + strings.Repeat("x", 600), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := limitTraceState(tc.in)
			if got != tc.want {
				t.Fatalf("limitTraceState = %.80q… (%d), want %.80q… (%d)", got, len(got), tc.want, len(tc.want))
			}
			if len(got) > MaxTraceStateLen && got != tc.in {
				t.Fatalf("cut to %d characters", len(got))
			}
		})
	}
}

func TestExtractEnforcesLimits(t *testing.T) {
	bag := func(n int) string {
		ms := make([]string, n)
		for i := range ms {
			ms[i] = fmt.Sprintf("key%d=value%d", i, i)
		}
		return strings.Join(ms, ",")
	}
	big := strings.Repeat("k=v,", MaxBaggageBytes/4) + "k=v"
	for _, tc := range []struct {
		name               string
		tracestate, bg     string
		wantState          string
		wantBaggageMembers int
	}{
		{"within limits", "a=1,b=2", "k=v", "a=1,b=2", 1},
		{"tracestate of 33 members cut to 32 (the library would drop it)", strings.Join(members(33, 0, 5), ","), "", strings.Join(members(32, 0, 5), ","), 0},
		{"tracestate of 1 MiB dropped, traceparent kept", "big=" + strings.Repeat("x", 1<<20), "", "", 0},
		{"baggage of 64 members kept", "", bag(64), "", 64},
		{"baggage of 65 members: the first 64 kept", "", bag(65), "", 64},
		{"baggage of 8192 bytes kept", "", big[:MaxBaggageBytes-1] + "v", "", 1},
		{"baggage over 8192 bytes dropped, traceparent kept", "", big, "", 0},
		{"baggage of 100 KB dropped", "", strings.Repeat("k=v,", 25_000), "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := headersOf(validTraceparent, tc.tracestate, tc.bg)
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
	r := &kgo.Record{Headers: headersOf(validTraceparent[:53]+"-"+strings.Repeat("a", MaxTraceparentLen), "", "")}
	if sc := trace.SpanContextFromContext(libraryTracer().Extract(context.Background(), r)); sc.IsValid() {
		t.Fatalf("extracted %v from a %d-byte traceparent", sc, len(r.Headers[0].Value))
	}
	// A later version within the limit is still read, by the library.
	r = &kgo.Record{Headers: headersOf("01"+validTraceparent[2:]+"-future", "", "")}
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

// TestLimitPropagatorHTTP: the limits and the HTTP rules for repeated
// fields, on the carrier otelhttp extracts from.
func TestLimitPropagatorHTTP(t *testing.T) {
	prop := LimitPropagator(testPropagator())
	extract := func(h http.Header) context.Context {
		return prop.Extract(context.Background(), propagation.HeaderCarrier(h))
	}
	t.Run("one of each", func(t *testing.T) {
		ctx := extract(http.Header{"Traceparent": {validTraceparent}, "Tracestate": {"a=1"}, "Baggage": {"k=v"}})
		sc := trace.SpanContextFromContext(ctx)
		if !sc.IsValid() || sc.TraceState().String() != "a=1" || baggage.FromContext(ctx).String() != "k=v" {
			t.Fatalf("span context %v state %q baggage %q", sc, sc.TraceState(), baggage.FromContext(ctx))
		}
	})
	t.Run("two traceparent fields are invalid", func(t *testing.T) {
		ctx := extract(http.Header{"Traceparent": {validTraceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			t.Fatalf("extracted %v from two traceparent fields", sc)
		}
	})
	t.Run("tracestate fields combined in order, then cut", func(t *testing.T) {
		fields := []string{strings.Join(members(20, 0, 10), ","), strings.Join(members(20, 20, 10), ",")}
		ctx := extract(http.Header{"Traceparent": {validTraceparent}, "Tracestate": fields})
		if got, want := trace.SpanContextFromContext(ctx).TraceState().String(), strings.Join(members(32, 0, 10), ","); got != want {
			t.Fatalf("tracestate %q, want %q", got, want)
		}
	})
	t.Run("1 MiB tracestate field", func(t *testing.T) {
		ctx := extract(http.Header{"Traceparent": {validTraceparent}, "Tracestate": {"big=" + strings.Repeat("x", 1<<20)}})
		sc := trace.SpanContextFromContext(ctx)
		if !sc.IsValid() || sc.TraceState().Len() != 0 {
			t.Fatalf("span context %v state %q", sc, sc.TraceState())
		}
	})
	t.Run("baggage fields combined", func(t *testing.T) {
		ctx := extract(http.Header{"Baggage": {"a=1", "b=2,c=3"}})
		if b := baggage.FromContext(ctx); b.Len() != 3 || b.Member("c").Value() != "3" {
			t.Fatalf("baggage %q", b)
		}
	})
	t.Run("baggage fields over 8192 bytes together dropped", func(t *testing.T) {
		half := strings.Repeat("k=v,", 1100) + "k=v"
		ctx := extract(http.Header{"Traceparent": {validTraceparent}, "Baggage": {half, half, "z=1"}})
		if b := baggage.FromContext(ctx); b.Len() != 0 {
			t.Fatalf("baggage %.80q… kept", b)
		}
		if !trace.SpanContextFromContext(ctx).IsValid() {
			t.Fatal("traceparent lost")
		}
	})
	t.Run("100 KB baggage", func(t *testing.T) {
		ctx := extract(http.Header{"Baggage": {strings.Repeat("k=v,", 25_000)}})
		if b := baggage.FromContext(ctx); b.Len() != 0 {
			t.Fatalf("baggage %.80q… kept", b)
		}
	})
	t.Run("65 baggage members over several fields: the first 64", func(t *testing.T) {
		var fields []string
		for i := range 65 {
			fields = append(fields, fmt.Sprintf("k%d=%d", i, i))
		}
		ctx := extract(http.Header{"Baggage": fields})
		if b := baggage.FromContext(ctx); b.Len() != 64 || b.Member("k64").Key() != "" {
			t.Fatalf("baggage %q", b)
		}
	})
	t.Run("fields are the wrapped propagator's", func(t *testing.T) {
		got, want := prop.Fields(), testPropagator().Fields()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("fields %q, want %q", got, want)
		}
		if w3c, bg := w3cFields(prop.Fields()); !w3c || !bg {
			t.Fatal("a limited W3C propagator must keep the direct codec")
		}
	})
}

// TestStartProcessUntrustedHeaders: whatever the headers, the record is
// processed: a traceparent breaking the W3C rules starts a new root (marked
// kretrieve.trace_context.invalid), oversized tracestate and baggage are cut
// or dropped without losing a valid traceparent.
func TestStartProcessUntrustedHeaders(t *testing.T) {
	for _, tc := range []struct {
		name        string
		headers     []kgo.RecordHeader
		parented    bool
		invalidAttr bool
	}{
		{"version ff", headersOf("ff"+validTraceparent[2:], "", ""), false, true},
		{"all-zero trace id", headersOf("00-00000000000000000000000000000000-b7ad6b7169203331-01", "", ""), false, true},
		{"all-zero span id", headersOf("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "", ""), false, true},
		{"uppercase hex", headersOf(strings.ToUpper(validTraceparent), "", ""), false, true},
		{"short trace id", headersOf("00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01", "", ""), false, true},
		{"long span id", headersOf("00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333100-01", "", ""), false, true},
		{"1 MiB traceparent", headersOf(validTraceparent+strings.Repeat("-0", 1<<19), "", ""), false, true},
		{"1 MiB tracestate", headersOf(validTraceparent, "big="+strings.Repeat("x", 1<<20), ""), true, false},
		{"100 KB baggage", headersOf(validTraceparent, "", strings.Repeat("k=v,", 25_000)), true, false},
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
			if tc.parented && process.SpanContext().TraceID().String() != validTraceparent[3:35] {
				t.Fatalf("trace %v, want the record's", process.SpanContext().TraceID())
			}
			if _, got := attrMap(process.Attributes())[string(telemetry.TraceContextInvalid)]; got != tc.invalidAttr {
				t.Fatalf("%s set: %v, want %v", telemetry.TraceContextInvalid, got, tc.invalidAttr)
			}
			if sc := trace.SpanContextFromContext(ctx); sc.TraceState().Len() != 0 || baggage.FromContext(ctx).Len() != 0 {
				t.Fatalf("handler context kept state %q baggage %q", sc.TraceState(), baggage.FromContext(ctx))
			}
		})
	}
}

// FuzzLimitTraceState checks the tracestate cut on any input: within the
// limits it changes nothing; otherwise it keeps at most 32 whole members,
// trimmed, in order, taken from the bytes it may read, within 512
// characters; and cutting again changes nothing.
func FuzzLimitTraceState(f *testing.F) {
	for _, s := range []string{
		"", "a=1", "a=1, b=2 ,,c=3", strings.Join(members(33, 0, 5), ","), strings.Join(members(40, 0, 20), ","),
		"big=" + strings.Repeat("x", 200) + ",a=1", " a=1 ,,\t,b=2," + strings.Repeat(",", 40),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := limitTraceState(in)
		within := len(in) <= MaxTraceStateLen && strings.Count(in, ",") < MaxTraceStateMembers
		if within {
			if out != in {
				t.Fatalf("%q within the limits became %q", in, out)
			}
			return
		}
		if len(out) > MaxTraceStateLen {
			t.Fatalf("%d characters", len(out))
		}
		if out == "" {
			return
		}
		kept := strings.Split(out, ",")
		if len(kept) > MaxTraceStateMembers {
			t.Fatalf("%d members", len(kept))
		}
		readable := in[:min(len(in), MaxTraceStateScan)]
		rest := readable
		for _, m := range kept {
			if m == "" || m != strings.Trim(m, " \t") || len(m) > MaxTraceStateMemberLen {
				t.Fatalf("member %q kept", m)
			}
			i := strings.Index(rest, m)
			if i < 0 {
				t.Fatalf("member %q is not, in order, in the %d bytes read of %q", m, len(readable), in)
			}
			rest = rest[i+len(m):]
		}
		if again := limitTraceState(out); again != out {
			t.Fatalf("cut twice: %q then %q", out, again)
		}
	})
}
