package tracing_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/internal/otlptest"
	"github.com/kretrieve/kretrieve/telemetry"
	"github.com/kretrieve/kretrieve/tracing"
)

// Records of a logger from NewLogger reach the collector over OTLP with
// the trace context of their ctx, and still reach stderr.
func TestLogsOverOTLP(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	var stderr syncBuffer
	log, err := tracing.NewLogger(&stderr, "json", "info") // built before Setup, as the commands do
	require.NoError(t, err)
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
	require.NoError(t, err)
	require.True(t, p.ExportingLogs)

	ctx, span := p.TracerProvider.Tracer("test").Start(t.Context(), "job")
	log.InfoContext(ctx, "request done", "kretrieve.request.id", "r1")
	log.DebugContext(ctx, "below the level")
	span.End()
	shutdown(t, p)

	logs := srv.Logs()
	require.Len(t, logs, 1)
	assert.Equal(t, "request done", logs[0].Body)
	assert.Equal(t, "INFO", logs[0].Severity)
	assert.Equal(t, span.SpanContext().TraceID().String(), logs[0].TraceID)
	assert.Equal(t, span.SpanContext().SpanID().String(), logs[0].SpanID)
	assert.Equal(t, "r1", logs[0].Attributes["kretrieve.request.id"])
	assert.NotContains(t, logs[0].Attributes, tracing.LogKeyTraceID, "the ids are the record's trace context, not attributes")
	assert.Contains(t, stderr.String(), `"msg":"request done"`)
	assert.Contains(t, stderr.String(), `"trace_id":"`+span.SpanContext().TraceID().String())
}

func TestLogsExporterNone(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	t.Setenv("OTEL_LOGS_EXPORTER", "none")
	var stderr syncBuffer
	log, err := tracing.NewLogger(&stderr, "text", "info")
	require.NoError(t, err)
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
	require.NoError(t, err)
	assert.False(t, p.ExportingLogs)
	log.Info("only on stderr")
	shutdown(t, p)
	assert.Empty(t, srv.Logs())
	assert.Contains(t, stderr.String(), "only on stderr")
}

func TestPropagatorsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env        string
		wantFields []string
	}{
		{env: "", wantFields: []string{"baggage", "traceparent", "tracestate"}},
		{env: "b3", wantFields: []string{"b3"}},
		{env: "tracecontext, jaeger", wantFields: []string{"traceparent", "tracestate", "uber-trace-id"}},
		{env: "none", wantFields: nil},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv("OTEL_PROPAGATORS", tc.env)
			t.Setenv("OTEL_SDK_DISABLED", "true") // installed even then
			p, err := tracing.Setup(t.Context())
			require.NoError(t, err)
			fields := p.Propagator.Fields()
			assert.ElementsMatch(t, tc.wantFields, fields)
			assert.ElementsMatch(t, tc.wantFields, otel.GetTextMapPropagator().Fields(), "installed globally")
		})
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
}

func TestGoRuntimeMetrics(t *testing.T) {
	log, _ := testLogger()
	manual := sdkmetric.NewManualReader()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithMetricReader(manual))
	require.NoError(t, err)
	defer shutdown(t, p)
	var rm metricdata.ResourceMetrics
	require.NoError(t, manual.Collect(t.Context(), &rm))
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
		}
	}
	assert.Contains(t, names, "go.goroutine.count")
	assert.Contains(t, names, "go.memory.used")
}

// WithPrometheusListen serves the SDK's metrics, the metric producers'
// and the Go runtime's on /metrics; Shutdown stops the server.
func TestPrometheusListen(t *testing.T) {
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log),
		tracing.WithPrometheusListen("127.0.0.1:0"), tracing.WithMetricProducer(staticProducer{}))
	require.NoError(t, err)
	assert.True(t, p.ExportingMetrics)
	addr := p.PrometheusAddr()
	require.NotEmpty(t, addr)

	body := getMetrics(t, "http://"+addr+"/metrics")
	for _, want := range []string{
		`produced_counter_total{otel_scope_name="producer-test",otel_scope_schema_url="",otel_scope_version=""} 7`,
		strings.ReplaceAll(telemetry.MetricSpansExported, ".", "_"),
		"go_goroutine_count",
	} {
		assert.Contains(t, body, want)
	}
	shutdown(t, p)
	_, err = http.Get("http://" + addr + "/metrics")
	assert.Error(t, err, "the server is stopped")
}

// OTEL_METRICS_EXPORTER=prometheus serves on OTEL_EXPORTER_PROMETHEUS_HOST
// and _PORT.
func TestPrometheusExporterFromEnv(t *testing.T) {
	t.Setenv("OTEL_METRICS_EXPORTER", "prometheus")
	t.Setenv("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1")
	t.Setenv("OTEL_EXPORTER_PROMETHEUS_PORT", "0")
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
	require.NoError(t, err)
	defer shutdown(t, p)
	require.True(t, strings.HasPrefix(p.PrometheusAddr(), "127.0.0.1:"), p.PrometheusAddr())
	assert.Contains(t, getMetrics(t, "http://"+p.PrometheusAddr()+"/metrics"), "go_goroutine_count")
}

func TestPrometheusListenInUse(t *testing.T) {
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithPrometheusListen("127.0.0.1:0"))
	require.NoError(t, err)
	defer shutdown(t, p)
	_, err = tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithPrometheusListen(p.PrometheusAddr()))
	assert.ErrorContains(t, err, "listen for prometheus /metrics on "+p.PrometheusAddr())
}

func getMetrics(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// OTEL_{TRACES,METRICS,LOGS}_EXPORTER=console writes to the console
// writer (stderr by default), with the temporality preference.
func TestConsoleExporters(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_METRICS_EXPORTER", "console")
	t.Setenv("OTEL_LOGS_EXPORTER", "console")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta")
	var console, stderr syncBuffer
	log, err := tracing.NewLogger(&stderr, "text", "info")
	require.NoError(t, err)
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithConsoleWriter(&console))
	require.NoError(t, err)
	require.True(t, p.Exporting && p.ExportingMetrics && p.ExportingLogs)
	ctx, span := p.TracerProvider.Tracer("test").Start(t.Context(), "console-span")
	counter, err := p.MeterProvider.Meter("test").Int64Counter("console.counter")
	require.NoError(t, err)
	counter.Add(ctx, 3)
	log.InfoContext(ctx, "console-log")
	span.End()
	shutdown(t, p)

	out := console.String()
	assert.Contains(t, out, `"Name":"console-span"`)
	assert.Contains(t, out, `"Name":"console.counter"`)
	assert.Contains(t, out, `"Temporality":"DeltaTemporality"`)
	assert.Contains(t, out, `"Value":"console-log"`)
	assert.Equal(t, tracing.DroppedTelemetry{}, p.Dropped())
}

// The shutdown budget holds whatever the caller's context allows.
func TestShutdownTimeoutOption(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", slowEndpoint(t))
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithShutdownTimeout(200*time.Millisecond))
	require.NoError(t, err)
	endSpans(t.Context(), p.TracerProvider, 1)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 30*time.Second)
	defer cancel()
	start := time.Now()
	require.NoError(t, p.Shutdown(ctx))
	assert.Less(t, time.Since(start), 600*time.Millisecond)
	assert.Equal(t, int64(1), p.Dropped().Spans)
}
