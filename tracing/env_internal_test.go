// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExportKind(t *testing.T) {
	for _, tc := range []struct {
		name                                       string
		env                                        map[string]string
		wantTraces, wantMetrics, wantLogs          string
		wantTracesErr, wantMetricsErr, wantLogsErr string
	}{
		{name: "nothing set"},
		{name: "blank endpoint", env: map[string]string{envEndpoint: "  "}},
		{name: "base endpoint", env: map[string]string{envEndpoint: "http://c:4318"}, wantTraces: "otlp", wantMetrics: "otlp", wantLogs: "otlp"},
		{name: "traces endpoint only", env: map[string]string{envTracesEndpoint: "http://c:4318/v1/traces"}, wantTraces: "otlp"},
		{name: "metrics endpoint only", env: map[string]string{envMetricsEndpoint: "http://c:4318/v1/metrics"}, wantMetrics: "otlp"},
		{name: "logs endpoint only", env: map[string]string{envLogsEndpoint: "http://c:4318/v1/logs"}, wantLogs: "otlp"},
		{name: "explicit otlp", env: map[string]string{envEndpoint: "http://c", envTracesExporter: "OTLP", envMetricsExporter: "otlp", envLogsExporter: "otlp"}, wantTraces: "otlp", wantMetrics: "otlp", wantLogs: "otlp"},
		{name: "traces none", env: map[string]string{envEndpoint: "http://c", envTracesExporter: "none"}, wantMetrics: "otlp", wantLogs: "otlp"},
		{name: "metrics none", env: map[string]string{envEndpoint: "http://c", envMetricsExporter: "None"}, wantTraces: "otlp", wantLogs: "otlp"},
		{name: "logs none", env: map[string]string{envEndpoint: "http://c", envLogsExporter: "none"}, wantTraces: "otlp", wantMetrics: "otlp"},
		{name: "grpc", env: map[string]string{envEndpoint: "http://c:4317", envProtocol: "grpc"}, wantTraces: "otlp", wantMetrics: "otlp", wantLogs: "otlp"},
		{
			name:       "http/json for all signals",
			env:        map[string]string{envEndpoint: "http://c", envProtocol: "http/json"},
			wantTraces: "otlp", wantMetrics: "otlp", wantLogs: "otlp",
		},
		{
			name:        "per-signal protocol wins",
			env:         map[string]string{envEndpoint: "http://c", envProtocol: "http/json", envMetricsProtocol: "grpc", envLogsProtocol: "thrift"},
			wantTraces:  "otlp",
			wantMetrics: "otlp",
			wantLogsErr: `OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: unsupported protocol "thrift" for logs (want grpc, http/protobuf, http/json)`,
		},
		{name: "unknown protocol without endpoint is ignored", env: map[string]string{envProtocol: "thrift"}},
		{
			name:       "console needs no endpoint",
			env:        map[string]string{envTracesExporter: "console", envMetricsExporter: "Console", envLogsExporter: "console"},
			wantTraces: "console", wantMetrics: "console", wantLogs: "console",
		},
		{name: "prometheus", env: map[string]string{envMetricsExporter: "prometheus"}, wantMetrics: "prometheus"},
		{name: "unknown exporter", env: map[string]string{envTracesExporter: "zipkin"}, wantTracesErr: `unsupported OTEL_TRACES_EXPORTER "zipkin" (want otlp, console or none)`},
		{
			name:       "lists, each kind once, in order",
			env:        map[string]string{envTracesExporter: "otlp, console", envMetricsExporter: "console,prometheus,OTLP,console", envLogsExporter: "console,otlp"},
			wantTraces: "otlp,console", wantMetrics: "console,prometheus,otlp", wantLogs: "console,otlp",
		},
		{name: "explicit otlp without endpoint", env: map[string]string{envTracesExporter: "otlp", envMetricsExporter: "otlp", envLogsExporter: "otlp"}, wantTraces: "otlp", wantMetrics: "otlp", wantLogs: "otlp"},
		{name: "none must stand alone", env: map[string]string{envTracesExporter: "none,otlp"}, wantTracesErr: `OTEL_TRACES_EXPORTER="none,otlp": none must stand alone`},
		{name: "unknown exporter in a list", env: map[string]string{envMetricsExporter: "otlp,zipkin"}, wantMetricsErr: `unsupported OTEL_METRICS_EXPORTER "zipkin"`},
		{name: "prometheus is for metrics", env: map[string]string{envLogsExporter: "prometheus"}, wantLogsErr: `unsupported OTEL_LOGS_EXPORTER "prometheus" (want otlp, console or none)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			for _, sig := range []struct {
				env           signalEnv
				want, wantErr string
			}{
				{tracesEnv, tc.wantTraces, tc.wantTracesErr},
				{metricsEnv, tc.wantMetrics, tc.wantMetricsErr},
				{logsEnv, tc.wantLogs, tc.wantLogsErr},
			} {
				kinds, err := exportKinds(getenv, sig.env)
				got := strings.Join(kinds, ",")
				if sig.wantErr != "" {
					require.Error(t, err, sig.env.exporter)
					assert.Contains(t, err.Error(), sig.wantErr)
					continue
				}
				require.NoError(t, err, sig.env.exporter)
				assert.Equal(t, sig.want, got, sig.env.exporter)
			}
		})
	}
}

func TestSDKDisabled(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "false": false, "1": false, "yes": false,
		"true": true, "TRUE": true, " True ": true,
	} {
		t.Run(v, func(t *testing.T) {
			assert.Equal(t, want, sdkDisabled(func(string) string { return v }))
		})
	}
}
