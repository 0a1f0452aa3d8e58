package tracing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExportEnabled(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		env                           map[string]string
		wantTraces, wantMetrics       bool
		wantTracesErr, wantMetricsErr string
	}{
		{name: "nothing set"},
		{name: "blank endpoint", env: map[string]string{envEndpoint: "  "}},
		{name: "base endpoint", env: map[string]string{envEndpoint: "http://c:4318"}, wantTraces: true, wantMetrics: true},
		{name: "traces endpoint only", env: map[string]string{envTracesEndpoint: "http://c:4318/v1/traces"}, wantTraces: true},
		{name: "metrics endpoint only", env: map[string]string{envMetricsEndpoint: "http://c:4318/v1/metrics"}, wantMetrics: true},
		{name: "explicit otlp", env: map[string]string{envEndpoint: "http://c", envTracesExporter: "OTLP", envMetricsExporter: "otlp"}, wantTraces: true, wantMetrics: true},
		{name: "traces none", env: map[string]string{envEndpoint: "http://c", envTracesExporter: "none"}, wantMetrics: true},
		{name: "metrics none", env: map[string]string{envEndpoint: "http://c", envMetricsExporter: "None"}, wantTraces: true},
		{name: "http/json", env: map[string]string{envEndpoint: "http://c", envProtocol: "http/json"}, wantTraces: true, wantMetrics: true},
		{
			name:           "per-signal protocol wins",
			env:            map[string]string{envEndpoint: "http://c", envProtocol: "grpc", envTracesProtocol: "http/protobuf"},
			wantTraces:     true,
			wantMetricsErr: `unsupported OTEL_EXPORTER_OTLP_PROTOCOL "grpc"`,
		},
		{name: "grpc without endpoint is ignored", env: map[string]string{envProtocol: "grpc"}},
		{name: "unknown exporter", env: map[string]string{envTracesExporter: "zipkin"}, wantTracesErr: `unsupported OTEL_TRACES_EXPORTER "zipkin"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			for _, sig := range []struct {
				env     signalEnv
				want    bool
				wantErr string
			}{
				{tracesEnv, tc.wantTraces, tc.wantTracesErr},
				{metricsEnv, tc.wantMetrics, tc.wantMetricsErr},
			} {
				got, err := exportEnabled(getenv, sig.env)
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
