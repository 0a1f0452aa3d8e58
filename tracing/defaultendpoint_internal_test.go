// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
)

// withSpecEndpoints points the default endpoints at a test sink, in place
// of the specification's localhost:4318 and :4317 (which another process
// on the machine may hold).
func withSpecEndpoints(httpURL, grpcURL string) Option {
	return optionFunc(func(c *config) { c.specHTTPEndpoint, c.specGRPCEndpoint = httpURL, grpcURL })
}

// The defaults are the specification's: http://localhost:4318 plus the
// signal's path for HTTP, http://localhost:4317 for grpc, and only for a
// signal that names otlp with no endpoint variable.
func TestDefaultEndpointsAreTheSpecification(t *testing.T) {
	env := map[string]string{
		envTracesExporter: "otlp", envMetricsExporter: "otlp,console", envLogsExporter: "otlp",
		envLogsProtocol: "grpc",
	}
	cfg := newConfig([]Option{WithGetenv(func(k string) string { return env[k] })})
	pl := plan{traces: []string{exportOTLP}, metrics: []string{exportOTLP, exportConsole}, logs: []string{exportOTLP}}
	assert.Equal(t, map[string]string{
		"traces":  "http://localhost:4318/v1/traces",
		"metrics": "http://localhost:4318/v1/metrics",
		"logs":    "http://localhost:4317",
	}, defaultEndpoints(cfg, pl))

	env[envTracesEndpoint] = "http://collector:4318/v1/traces"
	env[envEndpoint] = ""
	got := defaultEndpoints(cfg, pl)
	assert.NotContains(t, got, "traces", "a signal with its own endpoint variable uses it")
	env[envEndpoint] = "http://collector:4318"
	assert.Empty(t, defaultEndpoints(cfg, pl), "the base endpoint serves every signal")
}

// OTEL_{TRACES,METRICS,LOGS}_EXPORTER=otlp without an endpoint sends every
// signal to the default endpoint (here a sink standing in for
// localhost:4318), over http/protobuf and http/json, and says so once per
// process at info level.
func TestDefaultEndpointIsUsedAndLoggedOnce(t *testing.T) {
	defaultEndpointNotice = new(sync.Once)
	t.Cleanup(func() { defaultEndpointNotice = new(sync.Once) })
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, k := range []string{envTracesExporter, envMetricsExporter, envLogsExporter} {
		t.Setenv(k, "otlp")
	}

	srv := otlptest.NewServer(t) // http/protobuf, the default protocol
	emitOneOfEach(t, log, srv.Endpoint())
	spans := srv.Spans()
	require.Len(t, spans, 1, logs.String())
	assert.Equal(t, "job", spans[0].Name)
	assert.Contains(t, srv.MetricNames(), "job.items")
	require.Len(t, srv.Logs(), 1)
	assert.Equal(t, "job done", srv.Logs()[0].Body)

	// http/json: otlpjson's exporters and otlptracehttp (given the URL,
	// since it reads the process environment) post JSON there too.
	t.Setenv(envProtocol, protoJSON)
	var mu sync.Mutex
	posts := map[string]string{}
	jsonSink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts[r.URL.Path] = r.Header.Get("Content-Type")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	defer jsonSink.Close()
	emitOneOfEach(t, log, jsonSink.URL)
	mu.Lock()
	assert.Equal(t, map[string]string{"/v1/traces": "application/json", "/v1/metrics": "application/json", "/v1/logs": "application/json"}, posts, logs.String())
	mu.Unlock()

	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "OTLP endpoint not set; using the specification's default"), out)
	assert.Contains(t, out, "level=INFO")
	assert.Contains(t, out, "traces="+srv.Endpoint()+"/v1/traces")
	assert.Contains(t, out, "metrics="+srv.Endpoint()+"/v1/metrics")
	assert.Contains(t, out, "logs="+srv.Endpoint()+"/v1/logs")
	assert.NotContains(t, out, "level=WARN", "every export succeeded")
}

// emitOneOfEach runs Setup with httpDefault as the default HTTP endpoint,
// emits a span, a counter and a log record, and shuts down.
func emitOneOfEach(t *testing.T, log *slog.Logger, httpDefault string) {
	t.Helper()
	p, err := Setup(t.Context(), WithLogger(log), withSpecEndpoints(httpDefault, "http://127.0.0.1:1"))
	require.NoError(t, err)
	require.True(t, p.Exporting && p.ExportingMetrics && p.ExportingLogs)
	ctx, span := p.TracerProvider.Tracer("test").Start(t.Context(), "job")
	counter, err := p.MeterProvider.Meter("test").Int64Counter("job.items")
	require.NoError(t, err)
	counter.Add(ctx, 1)
	p.LoggerProvider.Logger("test").Emit(ctx, logRecord("job done"))
	span.End()
	require.NoError(t, p.Shutdown(t.Context()))
}

// logRecord returns an info record with body.
func logRecord(body string) otellog.Record {
	var r otellog.Record
	r.SetBody(attribute.StringValue(body))
	r.SetSeverity(otellog.SeverityInfo)
	return r
}

// Over grpc, the exporters that read the process environment (autoexport's
// otlptracegrpc and otlploggrpc, otlpmetricgrpc) are given the default
// endpoint, so they dial it: here a listener standing in for
// localhost:4317 sees each exporter connect when it exports.
func TestDefaultEndpointOverGRPCIsDialled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	grpcURL := "http://" + ln.Addr().String()
	env := map[string]string{envProtocol: protoGRPC, envTracesExporter: "otlp", envMetricsExporter: "otlp", envLogsExporter: "otlp"}
	cfg := newConfig([]Option{WithGetenv(func(k string) string { return env[k] }), withSpecEndpoints("http://127.0.0.1:1", grpcURL),
		WithExportRetry(false), WithExporterTimeout(time.Second)})
	pl := plan{traces: []string{exportOTLP}, metrics: []string{exportOTLP}, logs: []string{exportOTLP}}
	cfg.endpoints = defaultEndpoints(cfg, pl)
	require.Equal(t, map[string]string{"traces": grpcURL, "metrics": grpcURL, "logs": grpcURL}, cfg.endpoints)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	span, err := newSpanExporter(ctx, cfg, exportOTLP)
	require.NoError(t, err)
	assert.Equal(t, "*otlptrace.Exporter", fmt.Sprintf("%T", span))
	_ = span.ExportSpans(ctx, tracetest.SpanStubs{{Name: "job"}}.Snapshots()) // fails: the listener is no OTLP server
	poll.Until(t, 5*time.Second, func() bool { return conns.Load() >= 1 }, "the trace exporter did not dial %s", grpcURL)
	metric, err := newMetricExporter(ctx, cfg, exportOTLP)
	require.NoError(t, err)
	_ = metric.Export(ctx, &metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{{Name: "m", Data: metricdata.Sum[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}}}}}})
	poll.Until(t, 5*time.Second, func() bool { return conns.Load() >= 2 }, "the metric exporter did not dial %s", grpcURL)
	logExp, err := newLogExporter(ctx, cfg, exportOTLP)
	require.NoError(t, err)
	assert.Equal(t, "*otlploggrpc.Exporter", fmt.Sprintf("%T", logExp))
	_ = logExp.Export(ctx, []sdklog.Record{{}})
	poll.Until(t, 5*time.Second, func() bool { return conns.Load() >= 3 }, "the log exporter did not dial %s", grpcURL)
	for _, shut := range []func(context.Context) error{span.Shutdown, metric.Shutdown, logExp.Shutdown} {
		_ = shut(t.Context())
	}
}
