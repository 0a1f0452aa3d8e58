package main

import (
	"bytes"
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
		if r.URL.Path != "/api/traces/t1" {
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
