// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/ops/spans"
)

// attrs returns m as span attributes.
func attrs(m map[string]any) []spans.Attribute {
	var out []spans.Attribute
	for k, v := range m {
		out = append(out, spans.NewAttribute(k, v))
	}
	return out
}

// set sets the span's attribute key to v, replacing any value it had.
func set(s *spans.Span, key string, v any) {
	del(s, key)
	s.Attributes = append(s.Attributes, spans.NewAttribute(key, v))
}

// del removes the span's attribute key.
func del(s *spans.Span, key string) {
	out := s.Attributes[:0]
	for _, a := range s.Attributes {
		if a.Key != key {
			out = append(out, a)
		}
	}
	s.Attributes = out
}

func goodTrace() []spans.Span {
	kafka := func(op string, extra map[string]any) map[string]any {
		m := map[string]any{
			"messaging.system": "kafka", "messaging.operation.type": op, "messaging.operation.name": op,
			"messaging.destination.name": "t", "messaging.destination.partition.id": "0", "messaging.kafka.offset": int64(4),
			"messaging.kafka.cluster.id": "MkU3OEVBNTcwNTJENDM2Qk",
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	return []spans.Span{
		{TraceID: "a", SpanID: "1", Name: "POST /v1/search", Kind: "server"},
		{TraceID: "a", SpanID: "2", ParentSpanID: "1", Name: "send t", Kind: "producer", Attributes: attrs(kafka("send", nil)), StartTimeUnixNano: 10_000, EndTimeUnixNano: 20_000},
		{TraceID: "a", SpanID: "3", ParentSpanID: "2", Name: "wait t", Kind: "internal",
			Attributes: attrs(map[string]any{"messaging.system": "kafka", "messaging.destination.name": "t"}), StartTimeUnixNano: 15_000, EndTimeUnixNano: 30_000},
		{TraceID: "a", SpanID: "4", ParentSpanID: "2", Links: []spans.Link{{TraceID: "a", SpanID: "2"}}, Name: "process t", Kind: "consumer", Attributes: attrs(kafka("process", nil)), StartTimeUnixNano: 30_000, EndTimeUnixNano: 40_000},
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
		mutate func([]spans.Span)
		rule   string
	}{
		{"old kotel name", func(s []spans.Span) { s[1].Name = "t publish" }, "span-name"},
		{"wrong kind", func(s []spans.Span) { s[3].Kind = "internal" }, "span-kind"},
		{"unknown operation", func(s []spans.Span) { set(&s[1], "messaging.operation.type", "publish") }, "operation-type"},
		{"missing destination", func(s []spans.Span) { del(&s[3], "messaging.destination.name") }, "destination"},
		{"offset as string", func(s []spans.Span) { set(&s[3], "messaging.kafka.offset", "4") }, "kafka-offset"},
		{"empty cluster id", func(s []spans.Span) { set(&s[1], "messaging.kafka.cluster.id", "") }, "kafka-cluster-id"},
		{"cluster id not a string", func(s []spans.Span) { set(&s[3], "messaging.kafka.cluster.id", int64(7)) }, "kafka-cluster-id"},
		{"raw key", func(s []spans.Span) { set(&s[1], "messaging.kafka.message.key", "user@example.com") }, "raw-key"},
		{"no link", func(s []spans.Span) { s[3].Links = nil }, "process-link"},
		{"wait after process start", func(s []spans.Span) { s[2].EndTimeUnixNano = 35_000 }, "queue-wait"},
		{"no wait span", func(s []spans.Span) { s[2].Name = "something" }, "queue-wait"},
		{"wait claims an operation", func(s []spans.Span) { set(&s[2], "messaging.operation.type", "receive") }, "wait-not-an-operation"},
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
