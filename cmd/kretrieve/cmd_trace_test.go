// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/ops/spans"
)

func TestTraceCommandDrawsWaterfall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v3/traces/t1" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(jaegerTrace("send t")))
	}))
	defer srv.Close()
	var out bytes.Buffer
	if err := run(t.Context(), []string{"trace", "--jaeger-url", srv.URL, "--width", "20", "t1"}, mapEnv(nil), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "trace t1  3 spans") {
		t.Fatalf("waterfall:\n%s", out.String())
	}
	// The tree: send, then its children wait and process, indented, in start order.
	if !strings.HasPrefix(lines[1], "send t") || !strings.HasPrefix(lines[2], "  wait t") || !strings.HasPrefix(lines[3], "  process t") {
		t.Fatalf("tree order:\n%s", out.String())
	}
	if !strings.Contains(lines[2], "░") || !strings.Contains(lines[3], "█") {
		t.Fatalf("bars:\n%s", out.String())
	}
	if err := run(t.Context(), []string{"trace", "--jaeger-url", srv.URL, "missing"}, mapEnv(nil), &out, &bytes.Buffer{}); err == nil {
		t.Fatal("unknown trace accepted")
	}
}

func TestTraceCommandFromSpansFile(t *testing.T) {
	ms := int64(1e6)
	trace := []spans.Span{
		{TraceID: "aa", SpanID: "1", Name: "request", StartTimeUnixNano: 0, EndTimeUnixNano: 9 * ms, Service: "kretrieve-run"},
		{TraceID: "aa", SpanID: "2", ParentSpanID: "1", Name: "send t", StartTimeUnixNano: ms, EndTimeUnixNano: 2 * ms},
		{TraceID: "bb", SpanID: "3", Name: "request", StartTimeUnixNano: 0, EndTimeUnixNano: 20 * ms},
	}
	path := filepath.Join(t.TempDir(), "spans.jsonl")
	var file bytes.Buffer
	if err := spans.WriteSpans(&file, []spans.Trace{{Spans: trace}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"trace", "--spans-file", path, "--width", "10", "AA"}, mapEnv(nil), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 3 || lines[0] != "trace aa  2 spans  9.00 ms" ||
		!strings.HasPrefix(lines[2], "  send t") || !strings.HasSuffix(lines[1], "kretrieve-run") {
		t.Fatalf("waterfall:\n%s", out.String())
	}
	// "-" reads the spans file from stdin: kretrieve run --spans-file - | kretrieve trace --spans-file - ID.
	var piped bytes.Buffer
	if err := runIO(t.Context(), []string{"trace", "--spans-file", "-", "--width", "10", "aa"}, mapEnv(nil), bytes.NewReader(file.Bytes()), &piped, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if piped.String() != out.String() {
		t.Fatalf("from stdin:\n%s\nfrom the file:\n%s", piped.String(), out.String())
	}
	// Without an id (here from the variable): the traces, slowest first.
	out.Reset()
	if err := run(t.Context(), []string{"trace"}, mapEnv(map[string]string{"KRETRIEVE_SPANS_FILE": path}), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 3 || strings.Join(strings.Fields(lines[1]), " ") != "bb 20.00 1" || strings.Join(strings.Fields(lines[2]), " ") != "aa 9.00 2" {
		t.Fatalf("list:\n%s", out.String())
	}
	if err := run(t.Context(), []string{"trace", "--spans-file", path, "cc"}, mapEnv(nil), &out, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "2 traces") {
		t.Fatalf("unknown trace: %v", err)
	}
	if err := os.WriteFile(path, append(file.Bytes(), "{oops\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"trace", "--spans-file", path, "aa"}, mapEnv(nil), &out, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("bad line: %v", err)
	}
}

// TestTraceCommandHostileSpansFile: a spans file with escape sequences, a
// self-parented span and a cycle of parents is listed and drawn with every
// control character escaped, each span once; a done context stops it.
func TestTraceCommandHostileSpansFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spans.jsonl")
	lines := []string{
		`{"trace_id":"aa","span_id":"r","name":"root\u001b[31mRED\u001b]0;pwned\u0007","service":"svc\u001b[2J","start_time_unix_nano":0,"end_time_unix_nano":1000}`,
		`{"trace_id":"aa","span_id":"s","parent_span_id":"s","name":"self\u202e","start_time_unix_nano":10,"end_time_unix_nano":20}`,
		`{"trace_id":"aa","span_id":"x","parent_span_id":"y","name":"x","start_time_unix_nano":10,"end_time_unix_nano":20}`,
		`{"trace_id":"aa","span_id":"y","parent_span_id":"x","name":"y","start_time_unix_nano":10,"end_time_unix_nano":20}`,
		`{"trace_id":"bb\u001b[2J","span_id":"b","name":"b","start_time_unix_nano":-9000000000000000000,"end_time_unix_nano":9000000000000000000}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"trace", "--spans-file", path}, {"trace", "--spans-file", path, "aa"}} {
		var out bytes.Buffer
		if err := run(t.Context(), args, mapEnv(nil), &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if i := strings.IndexFunc(out.String(), func(r rune) bool { return r != '\n' && (r < 0x20 || r == 0x202e) }); i >= 0 {
			t.Errorf("%v prints a control character raw:\n%+q", args, out.String())
		}
		if args[len(args)-1] == "aa" && strings.Count(out.String(), "\n") != 5 {
			t.Errorf("%v: want a header and 4 spans:\n%s", args, out.String())
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out bytes.Buffer
	if err := runTrace(ctx, traceConfig{spansFile: path, id: "aa", width: 20}, nil, &out, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a done context: %v, drew:\n%s", err, out.String())
	}
}
