package conformance

import (
	"strings"
	"testing"
)

func goodTrace() []Span {
	kafka := func(op string, extra map[string]any) map[string]any {
		m := map[string]any{
			"messaging.system": "kafka", "messaging.operation.type": op, "messaging.operation.name": op,
			"messaging.destination.name": "t", "messaging.destination.partition.id": "0", "messaging.kafka.offset": int64(4),
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	return []Span{
		{TraceID: "a", SpanID: "1", Name: "POST /v1/search", Kind: "server", Attributes: map[string]any{}},
		{TraceID: "a", SpanID: "2", ParentID: "1", Name: "send t", Kind: "producer", Attributes: kafka("send", nil), StartMicros: 10, EndMicros: 20},
		{TraceID: "a", SpanID: "3", ParentID: "2", Name: "wait t", Kind: "internal",
			Attributes: map[string]any{"messaging.system": "kafka", "messaging.destination.name": "t"}, StartMicros: 15, EndMicros: 30},
		{TraceID: "a", SpanID: "4", ParentID: "2", Links: []string{"2"}, Name: "process t", Kind: "consumer", Attributes: kafka("process", nil), StartMicros: 30, EndMicros: 40},
	}
}

func TestGoodTraceConforms(t *testing.T) {
	if v := Check(goodTrace(), Default()); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}

func TestViolations(t *testing.T) {
	tests := []struct {
		name   string
		mutate func([]Span)
		rule   string
	}{
		{"old kotel name", func(s []Span) { s[1].Name = "t publish" }, "span-name"},
		{"wrong kind", func(s []Span) { s[3].Kind = "internal" }, "span-kind"},
		{"unknown operation", func(s []Span) { s[1].Attributes["messaging.operation.type"] = "publish" }, "operation-type"},
		{"missing destination", func(s []Span) { delete(s[3].Attributes, "messaging.destination.name") }, "destination"},
		{"offset as string", func(s []Span) { s[3].Attributes["messaging.kafka.offset"] = "4" }, "kafka-offset"},
		{"raw key", func(s []Span) { s[1].Attributes["messaging.kafka.message.key"] = "user@example.com" }, "raw-key"},
		{"no link", func(s []Span) { s[3].Links = nil }, "process-link"},
		{"wait after process start", func(s []Span) { s[2].EndMicros = 35 }, "queue-wait"},
		{"no wait span", func(s []Span) { s[2].Name = "something" }, "queue-wait"},
		{"wait claims an operation", func(s []Span) { s[2].Attributes["messaging.operation.type"] = "receive" }, "wait-not-an-operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans := goodTrace()
			tt.mutate(spans)
			v := Check(spans, Default())
			found := false
			for _, x := range v {
				if x.Rule == tt.rule {
					found = true
				}
			}
			if !found {
				t.Fatalf("want a %s violation, got %v", tt.rule, v)
			}
			if !strings.Contains(v[0].String(), "trace a") {
				t.Fatalf("violation text %q", v[0].String())
			}
		})
	}
}

func TestFromJaeger(t *testing.T) {
	spans := FromJaeger([]jaegerTrace{{
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
	if folded := FromJaeger([]jaegerTrace{{TraceID: "a", Spans: []jaegerSpan{{TraceID: "a", SpanID: "4",
		References: []jaegerRef{{RefType: "FOLLOWS_FROM", TraceID: "a", SpanID: "2"}}}}}})[0]; folded.ParentID != "2" || len(folded.Links) != 1 {
		t.Fatalf("parent folded into a link: %+v", folded)
	}
	s := spans[0]
	if s.ParentID != "2" || len(s.Links) != 1 || s.Kind != "consumer" || s.Service != "svc" || s.EndMicros != 105 ||
		s.Attributes["messaging.kafka.offset"] != int64(7) || s.Attributes["ok"] != true {
		t.Fatalf("span %+v", s)
	}
}
