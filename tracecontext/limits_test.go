// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/testutil/w3ctest"
)

func TestLimitTraceState(t *testing.T) {
	join := func(ms ...[]string) string {
		var all []string
		for _, m := range ms {
			all = append(all, m...)
		}
		return strings.Join(all, ",")
	}
	fits := join(w3ctest.Members(32, 0, 15)) // 32 members, 511 characters
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
		{"33 members: the last one goes", join(w3ctest.Members(33, 0, 5)), join(w3ctest.Members(32, 0, 5))},
		{"over 512 characters: members cut from the end", join(w3ctest.Members(40, 0, 20)), join(w3ctest.Members(24, 0, 20))},
		{"members over 128 characters go first", join(w3ctest.Members(2, 0, 10), []string{"big=" + long}, w3ctest.Members(30, 2, 10)), join(w3ctest.Members(32, 0, 10))},
		{"only whole members: a cut one is dropped", join(w3ctest.Members(5, 0, 100), w3ctest.Members(1, 5, 100)), join(w3ctest.Members(5, 0, 100))},
		{"empty members and whitespace dropped when cutting", " a=1 ,,\t,b=2," + strings.Repeat(",", 40), "a=1,b=2"},
		{"one member of 1 MiB", "big=" + strings.Repeat("x", 1<<20), ""},
		{"1 MiB of members: the first that fit", join(w3ctest.Members(1<<15, 0, 32)), join(w3ctest.Members(15, 0, 32))},
		{"a valid member after a huge one is beyond the scan", "big=" + strings.Repeat("x", MaxTraceStateScan) + ",a=1", ""},
		{"member ending exactly at the scan limit is kept", strings.Repeat(",", MaxTraceStateScan-4) + "a=1" + "," + strings.Repeat("x", 600), "a=1"},
		{"member cut by the scan limit is dropped", strings.Repeat(",", MaxTraceStateScan-4) + "a=12" + strings.Repeat("x", 600), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := LimitTraceState(tc.in)
			if got != tc.want {
				t.Fatalf("LimitTraceState = %.80q… (%d), want %.80q… (%d)", got, len(got), tc.want, len(tc.want))
			}
			if len(got) > MaxTraceStateLen && got != tc.in {
				t.Fatalf("cut to %d characters", len(got))
			}
		})
	}
}

// TestLimitPropagatorHTTP: the limits and the HTTP rules for repeated
// fields, on the carrier otelhttp extracts from.
func TestLimitPropagatorHTTP(t *testing.T) {
	prop := LimitPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	extract := func(h http.Header) context.Context {
		return prop.Extract(context.Background(), propagation.HeaderCarrier(h))
	}
	t.Run("one of each", func(t *testing.T) {
		ctx := extract(http.Header{"Traceparent": {w3ctest.Traceparent}, "Tracestate": {"a=1"}, "Baggage": {"k=v"}})
		sc := trace.SpanContextFromContext(ctx)
		if !sc.IsValid() || sc.TraceState().String() != "a=1" || baggage.FromContext(ctx).String() != "k=v" {
			t.Fatalf("span context %v state %q baggage %q", sc, sc.TraceState(), baggage.FromContext(ctx))
		}
	})
	t.Run("two traceparent fields are invalid", func(t *testing.T) {
		ctx := extract(http.Header{"Traceparent": {w3ctest.Traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			t.Fatalf("extracted %v from two traceparent fields", sc)
		}
	})
	t.Run("tracestate fields combined in order, then cut", func(t *testing.T) {
		fields := []string{strings.Join(w3ctest.Members(20, 0, 10), ","), strings.Join(w3ctest.Members(20, 20, 10), ",")}
		ctx := extract(http.Header{"Traceparent": {w3ctest.Traceparent}, "Tracestate": fields})
		if got, want := trace.SpanContextFromContext(ctx).TraceState().String(), strings.Join(w3ctest.Members(32, 0, 10), ","); got != want {
			t.Fatalf("tracestate %q, want %q", got, want)
		}
	})
	t.Run("1 MiB tracestate field", func(t *testing.T) {
		ctx := extract(http.Header{"Traceparent": {w3ctest.Traceparent}, "Tracestate": {"big=" + strings.Repeat("x", 1<<20)}})
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
		ctx := extract(http.Header{"Traceparent": {w3ctest.Traceparent}, "Baggage": {half, half, "z=1"}})
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
		got, want := prop.Fields(), propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Fields()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("fields %q, want %q", got, want)
		}
		if w3c, bg := W3CFields(prop.Fields()); !w3c || !bg {
			t.Fatal("a limited W3C propagator must keep the direct codec")
		}
	})
}

// TestStartProcessUntrustedHeaders: whatever the headers, the record is
// processed: a traceparent breaking the W3C rules starts a new root (marked
// kretrieve.trace_context.invalid), oversized tracestate and baggage are cut
// limits it changes nothing; otherwise it keeps at most 32 whole members,
// trimmed, in order, taken from the bytes it may read, within 512
// characters; and cutting again changes nothing.
func FuzzLimitTraceState(f *testing.F) {
	for _, s := range []string{
		"", "a=1", "a=1, b=2 ,,c=3", strings.Join(w3ctest.Members(33, 0, 5), ","), strings.Join(w3ctest.Members(40, 0, 20), ","),
		"big=" + strings.Repeat("x", 200) + ",a=1", " a=1 ,,\t,b=2," + strings.Repeat(",", 40),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := LimitTraceState(in)
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
		if again := LimitTraceState(out); again != out {
			t.Fatalf("cut twice: %q then %q", out, again)
		}
	})
}
