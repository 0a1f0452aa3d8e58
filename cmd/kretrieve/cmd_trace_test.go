package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
