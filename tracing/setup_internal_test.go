// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// http/protobuf, the default, goes through otlpwire; http/json still
// needs otlptracehttp, grpc otlptracegrpc (through autoexport).
func TestNewSpanExporterByProtocol(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantJSON bool
		wantGRPC bool
	}{
		{name: "default", env: map[string]string{}},
		{name: "http/protobuf", env: map[string]string{envProtocol: "http/protobuf"}},
		{name: "http/json", env: map[string]string{envProtocol: "http/json"}, wantJSON: true},
		{name: "traces protocol wins", env: map[string]string{envProtocol: "http/json", envTracesProtocol: "http/protobuf"}},
		{name: "traces http/json", env: map[string]string{envProtocol: "http/protobuf", envTracesProtocol: "http/json"}, wantJSON: true},
		{name: "grpc", env: map[string]string{envProtocol: "grpc"}, wantGRPC: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env[envEndpoint] = "http://127.0.0.1:4318"
			for k, v := range tc.env { // autoexport reads the process environment
				t.Setenv(k, v)
			}
			cfg := newConfig([]Option{WithGetenv(func(k string) string { return tc.env[k] })})
			exp, err := newSpanExporter(t.Context(), cfg, exportOTLP)
			require.NoError(t, err)
			defer func() { require.NoError(t, exp.Shutdown(t.Context())) }()
			_, isWire := exp.(*otlpwire.Exporter)
			assert.Equal(t, !tc.wantJSON && !tc.wantGRPC, isWire, "%T", exp)
			if tc.wantGRPC {
				assert.Equal(t, "*otlptrace.Exporter", fmt.Sprintf("%T", exp))
			}
		})
	}
}

// The trace exporter reads its variables through WithGetenv, and an
// invalid one fails Setup's exporter creation.
func TestNewSpanExporterInvalidVariable(t *testing.T) {
	cfg := newConfig([]Option{WithGetenv(func(k string) string {
		return map[string]string{envEndpoint: "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}[k]
	})})
	_, err := newSpanExporter(t.Context(), cfg, exportOTLP)
	assert.ErrorContains(t, err, "create otlp trace exporter: OTEL_EXPORTER_OTLP_TIMEOUT")
}
