// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/tracing"
)

// tracesOnlyEndpoint is a collector like Jaeger: it accepts traces and
// answers 404 on /v1/metrics and /v1/logs.
func tracesOnlyEndpoint(t *testing.T) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// slowEndpoint never answers while the test runs; at cleanup it lets the
// requests in flight (the exports Shutdown gave up on) end, so no
// goroutine outlives the test.
func slowEndpoint(t *testing.T) string {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL
}

// A dead, slow or traces-only collector costs a one-shot command at most
// about a second at shutdown, with the exporters' default timeouts (10 s)
// and retries, gives one warning, and Shutdown returns no error: the job's
// exit code is its own. What was lost is counted.
func TestTelemetryNeverFailsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint func(t *testing.T) string
		env      map[string]string
		// spansLost is whether the spans cannot reach the endpoint.
		spansLost bool
	}{
		{name: "traces-only endpoint", endpoint: tracesOnlyEndpoint},
		{name: "slow endpoint", endpoint: slowEndpoint, spansLost: true},
		{name: "refused port", endpoint: closedEndpoint, spansLost: true},
		{name: "refused port over grpc", endpoint: closedEndpoint, spansLost: true,
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{name: "traces-only endpoint over http/json", endpoint: tracesOnlyEndpoint,
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}},
		{name: "slow endpoint over http/json", endpoint: slowEndpoint, spansLost: true,
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}},
		{name: "refused port over http/json", endpoint: closedEndpoint, spansLost: true,
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint(t))
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			p, log, logs := setupWithLogger(t)
			emitJob(t, p, log)

			start := time.Now()
			require.NoError(t, p.Shutdown(context.WithoutCancel(t.Context())), "telemetry never fails the job")
			took := time.Since(start)
			assert.Less(t, took, 1500*time.Millisecond, "shutdown is bounded")

			out := logs.String()
			assert.Equal(t, 1, strings.Count(out, "level=WARN"), "one warning:\n%s", out)
			assert.Contains(t, out, `level=WARN msg="telemetry export failing; the job goes on without it`)
			d := p.Dropped()
			assert.Positive(t, d.MetricExports, "failed metric exports are counted")
			if tc.spansLost {
				assert.Equal(t, int64(1), d.Spans)
			} else {
				assert.Zero(t, d.Spans)
				assert.Positive(t, d.LogRecords, "log records of the 404 are counted")
			}
		})
	}
}

// A worker with a dead collector keeps working: ending spans never blocks
// and the span queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE); what overflows
// is counted at shutdown.
func TestDeadCollectorKeepsMemoryBounded(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", slowEndpoint(t))
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100")
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
	require.NoError(t, err)
	start := time.Now()
	endSpans(t.Context(), p.TracerProvider, 10_000)
	assert.Less(t, time.Since(start), time.Second, "ending spans does not wait for the collector")
	require.NoError(t, p.Shutdown(context.WithoutCancel(t.Context())))
	st := p.Stats()
	assert.Equal(t, int64(10_000), st.Ended)
	assert.GreaterOrEqual(t, st.Dropped, int64(10_000-100-2048), "the queue holds at most 100 spans and one batch in flight")
}
