// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestFromOTLPJSON converts a process span with an error, captured from
// Jaeger 2.13's api_v3: the parent and the link (the same send span, both
// kept by api_v3), the kind, the service, the times, typed attributes and
// the status.
func TestFromOTLPJSON(t *testing.T) {
	b, err := os.ReadFile("testdata/jaeger_v3_trace_error.json")
	if err != nil {
		t.Fatal(err)
	}
	var jr jaegerV3Response
	if err := json.Unmarshal(b, &jr); err != nil {
		t.Fatal(err)
	}
	got, err := fromOTLPJSON(jr.Result.ResourceSpans)
	if err != nil || len(got) != 3 {
		t.Fatalf("%d spans (%v)", len(got), err)
	}
	send, wait, process := got[0], got[1], got[2]
	if send.Kind != "producer" || send.ParentSpanID != "" || send.Service != "kretrieve-gateway" {
		t.Fatalf("send %+v", send)
	}
	if wait.Name != "wait kretrieve.requests" || wait.Kind != "internal" || wait.ParentSpanID != send.SpanID {
		t.Fatalf("wait %+v", wait)
	}
	offset, _ := process.Attr("messaging.kafka.offset")
	waitMS, _ := wait.Attr("kretrieve.queue_wait.ms")
	errType, _ := process.Attr("error.type")
	if process.Kind != "consumer" || process.Service != "kretrieve-retrieve" || process.ParentSpanID != send.SpanID ||
		len(process.Links) != 1 || process.Links[0].SpanID != send.SpanID || process.Links[0].TraceID != send.TraceID ||
		offset != int64(42) || errType != "handler_error" ||
		process.StatusCode != "error" || process.StatusMessage != "index unavailable" {
		t.Fatalf("process %+v", process)
	}
	if _, ok := waitMS.(float64); !ok {
		t.Fatalf("kretrieve.queue_wait.ms is %T, want float64", waitMS)
	}
	if process.EndTimeUnixNano <= process.StartTimeUnixNano || process.StartTimeUnixNano < 1_700_000_000e9 {
		t.Fatalf("process times %d..%d", process.StartTimeUnixNano, process.EndTimeUnixNano)
	}
}

// Enums may come as numbers (as Jaeger writes them) or names, integers as
// strings or numbers; arrays keep their element type.
func TestOTLPJSONVariants(t *testing.T) {
	body := `{"result":{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"s"}}]},
	 "scopeSpans":[{"spans":[{"traceId":"aa","spanId":"01","name":"n","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":5,"endTimeUnixNano":"9",
	  "status":{"code":"STATUS_CODE_OK"},"events":[{"name":"retry","timeUnixNano":"7","attributes":[{"key":"n","value":{"intValue":2}}]}],
	  "attributes":[{"key":"ok","value":{"boolValue":true}},{"key":"tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"stringValue":"b"}]}}}]}]}]}]}}`
	var jr jaegerV3Response
	if err := json.Unmarshal([]byte(body), &jr); err != nil {
		t.Fatal(err)
	}
	got, err := fromOTLPJSON(jr.Result.ResourceSpans)
	if err != nil || len(got) != 1 {
		t.Fatalf("%+v (%v)", got, err)
	}
	s := got[0]
	ok, _ := s.Attr("ok")
	tags, _ := s.Attr("tags")
	if s.Kind != "client" || s.StatusCode != "ok" || s.StartTimeUnixNano != 5 || s.EndTimeUnixNano != 9 || ok != true ||
		len(s.Events) != 1 || s.Events[0].TimeUnixNano != 7 || s.Service != "s" {
		t.Fatalf("span %+v", s)
	}
	if ts, isStrings := tags.([]string); !isStrings || len(ts) != 2 || ts[1] != "b" {
		t.Fatalf("tags %#v", tags)
	}
	if _, err := fromOTLPJSON([]otlpResourceSpans{{ScopeSpans: jr.Result.ResourceSpans[0].ScopeSpans}}); err != nil {
		t.Fatal(err)
	}
	var bad jaegerV3Response
	if err := json.Unmarshal([]byte(`{"result":{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"aa","spanId":"01","startTimeUnixNano":"soon"}]}]}]}}`), &bad); err == nil {
		t.Fatal("a malformed integer accepted")
	}
}

// TestReadOTLPJSON reads an OTLP/HTTP JSON trace export as an exporter
// posts it: the service, kind, times, parent, attributes and links.
func TestReadOTLPJSON(t *testing.T) {
	body := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"py"}}]},
	"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","parentSpanId":"00f067aa0ba902b7",
	"name":"process retrieval.candidates","kind":5,"startTimeUnixNano":"1000","endTimeUnixNano":"3000",
	"attributes":[{"key":"messaging.kafka.offset","value":{"intValue":"42"}}],"links":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"00f067aa0ba902b7"}]}]}]}]}`
	got, err := ReadOTLPJSON(strings.NewReader(body))
	if err != nil || len(got) != 1 {
		t.Fatalf("ReadOTLPJSON: %v, %d spans", err, len(got))
	}
	s := got[0]
	off, _ := s.Attr("messaging.kafka.offset")
	if s.Service != "py" || s.Kind != "consumer" || s.ParentSpanID != "00f067aa0ba902b7" || s.StartTimeUnixNano != 1000 || s.EndTimeUnixNano != 3000 ||
		off != int64(42) || len(s.Links) != 1 || s.Links[0].SpanID != "00f067aa0ba902b7" {
		t.Errorf("span %+v", s)
	}
	if _, err := ReadOTLPJSON(strings.NewReader(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x"}]}]}]}`)); err == nil {
		t.Error("a span without ids was read")
	}
}
