// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/tracing"
)

func shutdown(t *testing.T, p *tracing.Providers) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 5*time.Second)
	defer cancel()
	require.NoError(t, p.Shutdown(ctx))
}

func endSpans(ctx context.Context, tp trace.TracerProvider, n int) {
	tracer := tp.Tracer("test")
	for range n {
		_, span := tracer.Start(ctx, "work")
		span.End()
	}
}

func TestSetupNoEndpoint(t *testing.T) {
	log, _ := testLogger()
	rec := tracetest.NewSpanRecorder()
	manual := sdkmetric.NewManualReader()
	p, err := tracing.Setup(t.Context(),
		tracing.WithServiceName("no-endpoint"),
		tracing.WithSpanProcessor(rec),
		tracing.WithMetricReader(manual),
		tracing.WithLogger(log))
	require.NoError(t, err)

	assert.True(t, p.Enabled)
	assert.False(t, p.Exporting)
	assert.False(t, p.ExportingMetrics)
	assert.Equal(t, p.TracerProvider, otel.GetTracerProvider(), "tracer provider installed globally")
	assert.Equal(t, p.MeterProvider, otel.GetMeterProvider(), "meter provider installed globally")

	ctx, parent := p.TracerProvider.Tracer("test").Start(t.Context(), "parent")
	_, child := p.TracerProvider.Tracer("test").Start(ctx, "child")
	child.End()
	parent.End()

	ended := rec.Ended()
	require.Len(t, ended, 2, "the extra processor sees spans without an exporter")
	assert.Equal(t, "child", ended[0].Name())
	assert.Equal(t, parent.SpanContext().SpanID(), ended[0].Parent().SpanID())
	svc, ok := ended[0].Resource().Set().Value("service.name")
	require.True(t, ok)
	assert.Equal(t, "no-endpoint", svc.AsString())

	var rm metricdata.ResourceMetrics
	require.NoError(t, manual.Collect(t.Context(), &rm))
	exported, ok := sumValue(t, rm, otelnames.MetricSpansExported)
	require.True(t, ok, "span metrics registered without an exporter")
	assert.Zero(t, exported)

	shutdown(t, p)
	assert.Equal(t, tracing.SpanStats{}, p.Stats(), "nothing goes through the export pipeline")
	shutdown(t, p) // idempotent
}

func TestSetupExportsToOTLP(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		perSignal   bool // use the per-signal endpoint variables
		opts        []tracing.Option
		wantService string
	}{
		{
			name: "OTEL_SERVICE_NAME wins over WithServiceName",
			env: map[string]string{
				"OTEL_SERVICE_NAME":        "from-env",
				"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test,service.name=from-attributes",
			},
			opts:        []tracing.Option{tracing.WithServiceName("from-option")},
			wantService: "from-env",
		},
		{
			name:        "WithServiceName is the default",
			env:         map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test"},
			opts:        []tracing.Option{tracing.WithServiceName("from-option")},
			wantService: "from-option",
		},
		{
			name:        "package default",
			env:         map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test"},
			wantService: tracing.DefaultServiceName,
		},
		{
			name: "per-signal endpoints and gzip",
			env: map[string]string{
				"OTEL_RESOURCE_ATTRIBUTES":       "deployment.environment.name=test",
				"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
			},
			perSignal:   true,
			wantService: tracing.DefaultServiceName,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := otlptest.NewServer(t)
			if tc.perSignal {
				t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.Endpoint()+"/v1/traces")
				t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", srv.Endpoint()+"/v1/metrics")
			} else {
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			log, _ := testLogger()
			rec := tracetest.NewSpanRecorder()
			manual := sdkmetric.NewManualReader()
			opts := append([]tracing.Option{
				tracing.WithSpanProcessor(rec),
				tracing.WithMetricReader(manual),
				tracing.WithLogger(log),
			}, tc.opts...)
			p, err := tracing.Setup(t.Context(), opts...)
			require.NoError(t, err)
			assert.True(t, p.Exporting)
			assert.True(t, p.ExportingMetrics)

			ctx, parent := p.TracerProvider.Tracer("test").Start(t.Context(), "parent",
				trace.WithSpanKind(trace.SpanKindConsumer))
			endSpans(ctx, p.TracerProvider, 3)
			parent.End()
			counter, err := p.MeterProvider.Meter("test").Int64Counter("test.requests")
			require.NoError(t, err)
			counter.Add(t.Context(), 1)

			require.NoError(t, p.ForceFlush(t.Context()))
			var rm metricdata.ResourceMetrics
			require.NoError(t, manual.Collect(t.Context(), &rm))
			exported, _ := sumValue(t, rm, otelnames.MetricSpansExported)
			dropped, _ := sumValue(t, rm, otelnames.MetricSpansDropped)
			assert.Equal(t, int64(4), exported)
			assert.Zero(t, dropped)

			shutdown(t, p)

			spans := srv.Spans()
			require.Len(t, spans, 4)
			for _, s := range spans {
				assert.Equal(t, tc.wantService, s.ServiceName)
				assert.Equal(t, "test", s.ResourceAttributes["deployment.environment.name"])
				assert.Equal(t, parent.SpanContext().TraceID().String(), s.TraceID)
			}
			assert.Len(t, rec.Ended(), 4, "the extra processor also sees exported spans")
			assert.Subset(t, srv.MetricNames(),
				[]string{otelnames.MetricSpansDropped, otelnames.MetricSpansExported, "test.requests"})

			st := p.Stats()
			assert.Equal(t, tracing.SpanStats{Ended: 4, Exported: 4}, st)
			assert.Zero(t, p.DroppedSpans())
		})
	}
}

func TestSetupDisabled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		opt   func(t *testing.T) tracing.Option
	}{
		{name: "env lowercase", value: "true"},
		{name: "env mixed case", value: "True"},
		{name: "WithGetenv", opt: func(*testing.T) tracing.Option {
			return tracing.WithGetenv(envMap(map[string]string{"OTEL_SDK_DISABLED": "TRUE"}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := otlptest.NewServer(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
			if tc.value != "" {
				t.Setenv("OTEL_SDK_DISABLED", tc.value)
			}
			log, _ := testLogger()
			rec := tracetest.NewSpanRecorder()
			opts := []tracing.Option{tracing.WithSpanProcessor(rec), tracing.WithLogger(log)}
			if tc.opt != nil {
				opts = append(opts, tc.opt(t))
			}
			p, err := tracing.Setup(t.Context(), opts...)
			require.NoError(t, err)
			assert.False(t, p.Enabled)
			assert.False(t, p.Exporting)

			_, span := p.TracerProvider.Tracer("test").Start(t.Context(), "ignored")
			assert.False(t, span.IsRecording())
			assert.False(t, span.SpanContext().IsValid())
			span.End()
			counter, err := p.MeterProvider.Meter("test").Int64Counter("ignored")
			require.NoError(t, err)
			counter.Add(t.Context(), 1)

			// The propagator still passes an incoming context through.
			remote := trace.NewSpanContext(trace.SpanContextConfig{
				TraceID:    trace.TraceID{0x0a, 0x0b},
				SpanID:     trace.SpanID{0x0c},
				TraceFlags: trace.FlagsSampled,
				Remote:     true,
			})
			member, err := baggage.NewMember("tenant", "acme")
			require.NoError(t, err)
			bag, err := baggage.New(member)
			require.NoError(t, err)
			in := baggage.ContextWithBaggage(trace.ContextWithRemoteSpanContext(t.Context(), remote), bag)
			carrier := propagation.MapCarrier{}
			otel.GetTextMapPropagator().Inject(in, carrier)
			assert.Equal(t, "00-0a0b0000000000000000000000000000-0c00000000000000-01", carrier.Get("traceparent"))
			assert.Equal(t, "tenant=acme", carrier.Get("baggage"))
			out := p.Propagator.Extract(t.Context(), carrier)
			assert.Equal(t, remote, trace.SpanContextFromContext(out))
			assert.Equal(t, "acme", baggage.FromContext(out).Member("tenant").Value())

			shutdown(t, p)
			assert.Empty(t, rec.Ended(), "extra processors are not used")
			assert.Zero(t, srv.Requests(), "nothing is exported")
			assert.Equal(t, tracing.SpanStats{}, p.Stats())
		})
	}
}

func TestSetupSamplerFromEnv(t *testing.T) {
	sampledParent := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled, Remote: true,
	}))
	for _, tc := range []struct {
		name, sampler, arg string
		parent             context.Context
		wantSampled        bool
	}{
		{name: "default samples roots", wantSampled: true},
		{name: "traceidratio 0", sampler: "traceidratio", arg: "0"},
		{name: "traceidratio 1", sampler: "traceidratio", arg: "1", wantSampled: true},
		{name: "always_off", sampler: "always_off"},
		{name: "parentbased_always_off root", sampler: "parentbased_always_off"},
		{name: "parentbased_always_off sampled parent", sampler: "parentbased_always_off", parent: sampledParent, wantSampled: true},
		{name: "parentbased_traceidratio 0 sampled parent", sampler: "parentbased_traceidratio", arg: "0", parent: sampledParent, wantSampled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", tc.arg)
			log, _ := testLogger()
			rec := tracetest.NewSpanRecorder()
			p, err := tracing.Setup(t.Context(), tracing.WithSpanProcessor(rec), tracing.WithLogger(log))
			require.NoError(t, err)

			ctx := t.Context()
			if tc.parent != nil {
				ctx = tc.parent
			}
			for range 20 {
				_, span := p.TracerProvider.Tracer("test").Start(ctx, "work")
				assert.Equal(t, tc.wantSampled, span.SpanContext().IsSampled())
				span.End()
			}
			shutdown(t, p)
			if tc.wantSampled {
				assert.Len(t, rec.Ended(), 20)
			} else {
				assert.Empty(t, rec.Ended(), "unsampled spans reach no processor")
			}
		})
	}
}

// closedEndpoint returns the URL of a port nothing listens on.
func closedEndpoint(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

func TestSetupExportFailureIsCounted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint func(t *testing.T) string
	}{
		{name: "server error", endpoint: func(t *testing.T) string {
			srv := otlptest.NewServer(t)
			srv.SetStatus(http.StatusInternalServerError)
			return srv.Endpoint()
		}},
		{name: "connection refused", endpoint: closedEndpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint(t))
			t.Setenv("OTEL_METRICS_EXPORTER", "none")
			log, logs := testLogger()
			p, err := tracing.Setup(t.Context(),
				tracing.WithLogger(log),
				tracing.WithExportRetry(false),
				tracing.WithExporterTimeout(2*time.Second))
			require.NoError(t, err)
			require.True(t, p.Exporting)
			require.False(t, p.ExportingMetrics)

			endSpans(t.Context(), p.TracerProvider, 5)
			shutdown(t, p)

			st := p.Stats()
			assert.Equal(t, tracing.SpanStats{Ended: 5, Failed: 5, Dropped: 5}, st)
			assert.Equal(t, int64(5), p.DroppedSpans())
			assert.Contains(t, logs.String(), "level=WARN msg=\"telemetry export failing;", "exporter errors are logged")
			assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "one warning:\n%s", logs)
			assert.Contains(t, logs.String(), "msg=\"spans were not exported\" dropped=5")
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

func TestSetupQueueOverflowIsCounted(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "1")
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1")
	log, _ := testLogger()
	metrics := newLastValueExporter()
	p, err := tracing.Setup(t.Context(),
		tracing.WithLogger(log),
		tracing.WithMetricReader(sdkmetric.NewPeriodicReader(metrics)))
	require.NoError(t, err)

	release := srv.Hold() // the first export blocks, so the one-slot queue overflows
	const n = 100
	endSpans(t.Context(), p.TracerProvider, n)
	before := p.Stats()
	assert.Equal(t, int64(n), before.Ended)
	assert.Zero(t, before.Dropped, "overflow is only known at shutdown")
	release()
	shutdown(t, p)

	st := p.Stats()
	assert.Equal(t, int64(n), st.Ended)
	assert.Zero(t, st.Failed)
	assert.GreaterOrEqual(t, st.Dropped, int64(n-5))
	assert.Equal(t, st.Ended, st.Exported+st.Dropped)
	assert.Len(t, srv.Spans(), int(st.Exported))

	got, ok := metrics.value(otelnames.MetricSpansDropped)
	require.True(t, ok, "final collection at shutdown reports the dropped counter")
	assert.Equal(t, st.Dropped, got)
	got, _ = metrics.value(otelnames.MetricSpansExported)
	assert.Equal(t, st.Exported, got)
}

func TestSetupEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{
			name:    "unknown traces exporter",
			env:     map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"},
			wantErr: `unsupported OTEL_TRACES_EXPORTER "jaeger"`,
		},
		{
			name:    "unknown metrics exporter",
			env:     map[string]string{"OTEL_METRICS_EXPORTER": "statsd"},
			wantErr: `unsupported OTEL_METRICS_EXPORTER "statsd" (want otlp, console, prometheus or none)`,
		},
		{
			name:    "unknown logs exporter",
			env:     map[string]string{"OTEL_LOGS_EXPORTER": "loki"},
			wantErr: `unsupported OTEL_LOGS_EXPORTER "loki" (want otlp, console or none)`,
		},
		{
			name:    "unknown metrics protocol",
			env:     map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/xml"},
			wantErr: `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: unsupported protocol "http/xml" for metrics (want grpc, http/protobuf, http/json)`,
		},
		{
			name:    "unknown traces protocol",
			env:     map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"},
			wantErr: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: unsupported protocol "thrift" for traces (want grpc, http/protobuf, http/json)`,
		},
		{
			name:    "unknown propagator",
			env:     map[string]string{"OTEL_PROPAGATORS": "tracecontext,w3c"},
			wantErr: `OTEL_PROPAGATORS="tracecontext,w3c"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, _ := testLogger()
			_, err := tracing.Setup(t.Context(), tracing.WithGetenv(envMap(tc.env)), tracing.WithLogger(log))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestSetupExporterNone(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	log, _ := testLogger()
	rec := tracetest.NewSpanRecorder()
	p, err := tracing.Setup(t.Context(), tracing.WithSpanProcessor(rec), tracing.WithLogger(log))
	require.NoError(t, err)
	assert.False(t, p.Exporting)
	assert.True(t, p.ExportingMetrics)

	endSpans(t.Context(), p.TracerProvider, 2)
	shutdown(t, p)
	assert.Len(t, rec.Ended(), 2)
	assert.Empty(t, srv.Spans())
	assert.Contains(t, srv.MetricNames(), otelnames.MetricSpansExported)
}

// staticProducer hands one counter to every collection, as kafkatrace.Metrics does.
type staticProducer struct{}

func (staticProducer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	return []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: "producer-test"},
		Metrics: []metricdata.Metrics{{Name: "produced.counter", Data: metricdata.Sum[int64]{
			Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
			DataPoints: []metricdata.DataPoint[int64]{{Value: 7}},
		}}},
	}}, nil
}

func TestSetupExportsMetricProducers(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithMetricProducer(staticProducer{}))
	require.NoError(t, err)
	shutdown(t, p)
	assert.Contains(t, srv.MetricNames(), "produced.counter")
}

func TestSetupParentBasedSampling(t *testing.T) {
	for sampler, want := range map[string]bool{
		"":                         true,
		"parentbased_always_on":    true,
		"parentbased_traceidratio": true,
		"always_on":                false,
		"traceidratio":             false,
	} {
		t.Run(sampler, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", sampler)
			log, _ := testLogger()
			p, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
			require.NoError(t, err)
			assert.Equal(t, want, p.ParentBasedSampling)
			shutdown(t, p)
		})
	}
}

// Records of a logger from NewLogger reach the collector over OTLP with
// the trace context of their ctx, and still reach stderr.
func TestLogsOverOTLP(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	var stderr syncbuf.Buffer
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
	var stderr syncbuf.Buffer
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
		strings.ReplaceAll(otelnames.MetricSpansExported, ".", "_"),
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
	var console syncbuf.Buffer
	p, log, _ := setupWithLogger(t, tracing.WithConsoleWriter(&console))
	emitJob(t, p, log)
	shutdown(t, p)

	out := console.String()
	assert.Contains(t, out, `"Name":"job"`)
	assert.Contains(t, out, `"Name":"job.items"`)
	assert.Contains(t, out, `"Temporality":"DeltaTemporality"`)
	assert.Contains(t, out, `"Value":"job done"`)
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
