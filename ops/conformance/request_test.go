// SPDX-License-Identifier: Apache-2.0

package conformance

import "testing"

// TestCheckRequestShapes checks goodTrace (one hop, topic t, consumed
// without a group) against shapes it has and shapes it lacks.
func TestCheckRequestShapes(t *testing.T) {
	good := Shape{Root: "POST /v1/search", RootKind: "server", Hops: []Hop{{Topic: "t"}}, Spans: 4}
	if v := CheckRequest(goodTrace(), good, Default()); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
	for _, tc := range []struct {
		name  string
		shape func(Shape) Shape
		rule  string
	}{
		{"other root", func(s Shape) Shape { s.Root = "request"; return s }, "request-spans"},
		{"other root kind", func(s Shape) Shape { s.RootKind = "client"; return s }, "request-root"},
		{"other root service", func(s Shape) Shape { s.RootService = "gateway"; return s }, "request-root"},
		{"a group", func(s Shape) Shape { s.Hops = []Hop{{Topic: "t", Group: "g"}}; return s }, "request-group"},
		{"a service", func(s Shape) Shape { s.Hops = []Hop{{Topic: "t", Service: "worker"}}; return s }, "request-service"},
		{"a second hop", func(s Shape) Shape { s.Hops = append(s.Hops, Hop{Topic: "u"}); return s }, "request-spans"},
		{"more spans", func(s Shape) Shape { s.Spans = 5; return s }, "request-spans"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := CheckRequest(goodTrace(), tc.shape(good), Default())
			if len(v) == 0 {
				t.Fatalf("no violation, want %q", tc.rule)
			}
			for _, v := range v {
				if v.Rule != tc.rule {
					t.Errorf("violation %v, want only %q", v, tc.rule)
				}
			}
		})
	}
	spans := goodTrace()
	spans[3].Kind = "internal" // the process span
	spans[1].ParentSpanID = "" // the send span
	got := map[string]bool{}
	for _, v := range CheckRequest(spans, good, Default()) {
		got[v.Rule] = true
	}
	for _, rule := range []string{"request-kind", "request-parent", "span-kind"} {
		if !got[rule] {
			t.Errorf("no %q violation in %v", rule, got)
		}
	}
}
