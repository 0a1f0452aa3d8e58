// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// jaegerTrace is a Jaeger /api/traces answer for one send/wait/process hop.
func jaegerTrace(sendName string) string {
	return `{"data":[{"traceID":"t1","processes":{"p1":{"serviceName":"svc"}},"spans":[
 {"traceID":"t1","spanID":"s1","operationName":"` + sendName + `","startTime":10,"duration":5,"processID":"p1","references":[],
  "tags":[{"key":"span.kind","type":"string","value":"producer"},{"key":"messaging.system","type":"string","value":"kafka"},
   {"key":"messaging.operation.type","type":"string","value":"send"},{"key":"messaging.operation.name","type":"string","value":"send"},
   {"key":"messaging.destination.name","type":"string","value":"t"}]},
 {"traceID":"t1","spanID":"s2","operationName":"wait t","startTime":12,"duration":8,"processID":"p1",
  "references":[{"refType":"CHILD_OF","traceID":"t1","spanID":"s1"}],
  "tags":[{"key":"messaging.system","type":"string","value":"kafka"},{"key":"messaging.destination.name","type":"string","value":"t"}]},
 {"traceID":"t1","spanID":"s3","operationName":"process t","startTime":20,"duration":5,"processID":"p1",
  "references":[{"refType":"CHILD_OF","traceID":"t1","spanID":"s1"},{"refType":"FOLLOWS_FROM","traceID":"t1","spanID":"s1"}],
  "tags":[{"key":"span.kind","type":"string","value":"consumer"},{"key":"messaging.system","type":"string","value":"kafka"},
   {"key":"messaging.operation.type","type":"string","value":"process"},{"key":"messaging.operation.name","type":"string","value":"process"},
   {"key":"messaging.destination.name","type":"string","value":"t"},{"key":"messaging.destination.partition.id","type":"string","value":"0"},
   {"key":"messaging.kafka.offset","type":"int64","value":3}]}]}]}`
}

func TestConformanceCommand(t *testing.T) {
	body := jaegerTrace("send t")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/traces/t1" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	var out bytes.Buffer
	args := []string{"conformance", "--jaeger-url", srv.URL, "--trace-id", "t1"}
	if err := run(t.Context(), args, mapEnv(nil), &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("conforming trace: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "3 spans in 1 traces checked, 0 violations") {
		t.Fatalf("output %q", out.String())
	}
	body = jaegerTrace("t publish") // kotel's old span name
	out.Reset()
	err := run(t.Context(), args, mapEnv(nil), &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "span-name") {
		t.Fatalf("old span name accepted: %v\n%s", err, out.String())
	}
	if err := run(t.Context(), []string{"conformance"}, mapEnv(nil), &out, &bytes.Buffer{}); err == nil {
		t.Fatal("conformance without --service or --trace-id accepted")
	}
}
