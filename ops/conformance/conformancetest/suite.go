// SPDX-License-Identifier: Apache-2.0

// Package conformancetest is the trace contract every tier of kretrieve
// passes, written once: TestTraces sends requests through a Tier and checks
// each request's trace with conformance.CheckRequest. The in-process tier
// (package pipeline, on kfake) and the container tier (package integration,
// traces read back from Jaeger) both run it, the way watermill's
// pubsub/tests runs one suite against every Pub/Sub.
package conformancetest

import (
	"slices"
	"testing"

	"github.com/kretrieve/kretrieve/ops/conformance"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/otelnames"
)

// Tier is one way to run kretrieve, as TestTraces drives it.
type Tier struct {
	// Shape is the structure of every request's trace.
	Shape conformance.Shape
	// Requests is how many requests TestTraces sends; <= 0 means 20.
	Requests int
	// Search sends the i-th request, waits for its result and returns its
	// trace id, failing t if the request does not complete.
	Search func(t *testing.T, i int) (traceID string)
	// Trace returns the spans of traceID once all Shape.Spans of them are
	// there, or what it has at a deadline of its own.
	Trace func(t *testing.T, traceID string) []spans.Span
}

// TestTraces sends tier.Requests requests and reports every violation
// conformance.CheckRequest finds in their traces, with conformance.Default
// options. Its sub-test "broken traces are reported" breaks the first trace
// in several ways and fails unless every break is reported, so that the
// suite cannot pass vacuously.
func TestTraces(t *testing.T, tier Tier) {
	n := tier.Requests
	if n <= 0 {
		n = 20
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = tier.Search(t, i)
	}
	var first []spans.Span
	for _, id := range ids {
		got := tier.Trace(t, id)
		if len(got) == 0 {
			t.Fatalf("trace %s: no spans", id)
		}
		for _, v := range conformance.CheckRequest(got, tier.Shape, conformance.Default()) {
			t.Errorf("%v", v)
		}
		if first == nil {
			first = got
		}
	}
	if t.Failed() {
		return
	}
	t.Run("broken traces are reported", func(t *testing.T) {
		testBreaks(t, tier.Shape, first)
	})
}

// testBreaks checks that each break of the conforming trace good is
// reported with its rule, by Check alone where Check's rules cover it.
func testBreaks(t *testing.T, shape conformance.Shape, good []spans.Span) {
	if len(shape.Hops) < 2 {
		t.Fatalf("shape %+v: the breaks need two hops", shape)
	}
	hop := shape.Hops[1].Topic
	find := func(in []spans.Span, name string) int {
		i := slices.IndexFunc(in, func(s spans.Span) bool { return s.Name == name })
		if i < 0 {
			t.Fatalf("no span %q in the trace", name)
		}
		return i
	}
	root := good[find(good, shape.Root)]
	for _, b := range []struct {
		name string
		// byCheck: conformance.Check alone reports the break.
		rule    string
		byCheck bool
		brk     func([]spans.Span) []spans.Span
	}{
		{"wait span dropped", "queue-wait", true, func(s []spans.Span) []spans.Span {
			return slices.Delete(s, find(s, otelnames.WaitSpan(hop)), find(s, otelnames.WaitSpan(hop))+1)
		}},
		{"process span reparented to the root", "process-parent", true, func(s []spans.Span) []spans.Span {
			s[find(s, otelnames.ProcessSpan(hop))].ParentSpanID = root.SpanID
			return s
		}},
		{"process span without its link", "process-link", true, func(s []spans.Span) []spans.Span {
			s[find(s, otelnames.ProcessSpan(hop))].Links = nil
			return s
		}},
		{"raw key recorded", "raw-key", true, func(s []spans.Span) []spans.Span {
			i := find(s, otelnames.SendSpan(hop))
			s[i].Attributes = append(slices.Clone(s[i].Attributes), spans.NewAttribute("messaging.kafka.message.key", "req-1"))
			return s
		}},
		{"send span reparented to the root", "request-parent", false, func(s []spans.Span) []spans.Span {
			s[find(s, otelnames.SendSpan(hop))].ParentSpanID = root.SpanID
			return s
		}},
		{"process span dropped", "request-spans", false, func(s []spans.Span) []spans.Span {
			return slices.Delete(s, find(s, otelnames.ProcessSpan(hop)), find(s, otelnames.ProcessSpan(hop))+1)
		}},
		{"span of another trace", "request-trace", false, func(s []spans.Span) []spans.Span {
			s[find(s, otelnames.SendSpan(hop))].TraceID = "0123456789abcdef0123456789abcdef"
			return s
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			broken := b.brk(slices.Clone(good))
			check := func(what string, vs []conformance.Violation) {
				t.Helper()
				if !slices.ContainsFunc(vs, func(v conformance.Violation) bool { return v.Rule == b.rule }) {
					t.Errorf("%s reports %v, want a %q violation", what, vs, b.rule)
				}
			}
			check("CheckRequest", conformance.CheckRequest(broken, shape, conformance.Default()))
			if b.byCheck {
				check("Check", conformance.Check(broken, conformance.Default()))
			}
		})
	}
}
