// SPDX-License-Identifier: Apache-2.0

package spans

import "testing"

func TestFromJaeger(t *testing.T) {
	spans := fromJaeger([]jaegerTrace{{
		TraceID:   "a",
		Processes: map[string]jaegerProcess{"p1": {ServiceName: "svc"}},
		Spans: []jaegerSpan{{
			TraceID: "a", SpanID: "4", OperationName: "process t", ProcessID: "p1", StartTime: 100, Duration: 5,
			References: []jaegerRef{{RefType: "CHILD_OF", TraceID: "a", SpanID: "2"}, {RefType: "FOLLOWS_FROM", TraceID: "a", SpanID: "2"}},
			Tags: []jaegerTag{
				{Key: "span.kind", Type: "string", Value: "consumer"},
				{Key: "messaging.kafka.offset", Type: "int64", Value: float64(7)},
				{Key: "ok", Type: "bool", Value: true},
			},
		}},
	}})
	if folded := fromJaeger([]jaegerTrace{{TraceID: "a", Spans: []jaegerSpan{{TraceID: "a", SpanID: "4",
		References: []jaegerRef{{RefType: "FOLLOWS_FROM", TraceID: "a", SpanID: "2"}}}}}})[0]; folded.ParentSpanID != "2" || len(folded.Links) != 1 {
		t.Fatalf("parent folded into a link: %+v", folded)
	}
	s := spans[0]
	offset, _ := s.Attr("messaging.kafka.offset")
	ok, _ := s.Attr("ok")
	if s.ParentSpanID != "2" || len(s.Links) != 1 || s.Kind != "consumer" || s.Service != "svc" || s.EndTimeUnixNano != 105_000 ||
		offset != int64(7) || ok != true {
		t.Fatalf("span %+v", s)
	}
}
