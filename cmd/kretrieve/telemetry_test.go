// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A collector that only takes traces (Jaeger answers 404 on /v1/metrics
// and /v1/logs) or no collector at all (a refused port) leaves the job's
// exit code alone, costs about a second at most at shutdown, and gives one
// warning.
func TestRunWithBrokenCollector(t *testing.T) {
	tracesOnly := func(t *testing.T) string {
		mux := http.NewServeMux()
		mux.HandleFunc("/v1/traces", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/x-protobuf")
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	refused := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		return "http://" + addr
	}
	index := testIndex(t)
	for name, endpoint := range map[string]func(*testing.T) string{"traces-only": tracesOnly, "refused": refused} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint(t))
			var stdout, stderr bytes.Buffer
			start := time.Now()
			err := run(t.Context(), []string{"run", "--requests", "50", "--log-level", "warn", "--index", index}, mapEnv(nil), &stdout, &stderr)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("run failed because of telemetry: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), "completed 50") {
				t.Errorf("run output:\n%s", stdout.String())
			}
			if n := strings.Count(stderr.String(), "level=WARN"); n != 1 || !strings.Contains(stderr.String(), "telemetry export failing") {
				t.Errorf("want one telemetry warning, got %d:\n%s", n, stderr.String())
			}
			if took > 3*time.Second {
				t.Errorf("run took %v", took)
			}
		})
	}
}
