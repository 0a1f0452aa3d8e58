// SPDX-License-Identifier: Apache-2.0

package otlpwire_test

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// TestConfig: each Config field shapes the request as documented. The
// OTEL_EXPORTER_OTLP_* variables that produce a Config are tested in
// package tracing, which reads them.
func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         func(url string) otlpwire.Config
		wantPath    string
		wantHeaders map[string]string
		wantGzip    bool
	}{
		{
			name:     "endpoint URL is used as-is, without its query",
			cfg:      func(u string) otlpwire.Config { return otlpwire.Config{EndpointURL: u + "/custom/traces?ignored=1"} },
			wantPath: "/custom/traces",
		},
		{
			name:     "endpoint URL without a path posts to /",
			cfg:      func(u string) otlpwire.Config { return otlpwire.Config{EndpointURL: " " + u + " "} },
			wantPath: "/",
		},
		{
			name: "headers are sent",
			cfg: func(u string) otlpwire.Config {
				return otlpwire.Config{EndpointURL: u + "/v1/traces", Headers: map[string]string{"api-key": "s=cret,1", "X-Tenant": "acme corp"}}
			},
			wantPath:    "/v1/traces",
			wantHeaders: map[string]string{"Api-Key": "s=cret,1", "X-Tenant": "acme corp"},
		},
		{
			name: "gzip",
			cfg: func(u string) otlpwire.Config {
				return otlpwire.Config{EndpointURL: u + "/v1/traces", Compression: otlpwire.GzipCompression}
			},
			wantPath: "/v1/traces",
			wantGzip: true,
		},
		{
			name: "scheme in any case",
			cfg: func(u string) otlpwire.Config {
				return otlpwire.Config{EndpointURL: "HTTP" + u[len("http"):] + "/v1/traces"}
			},
			wantPath: "/v1/traces",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCollector(t)
			exp, err := otlpwire.New(tc.cfg(srv.URL))
			require.NoError(t, err)
			spans := stubSpans()
			require.NoError(t, exp.ExportSpans(t.Context(), spans))
			require.NoError(t, exp.Shutdown(t.Context()))

			req := srv.only(t)
			assert.Equal(t, http.MethodPost, req.Method)
			assert.Equal(t, tc.wantPath, req.Path)
			assert.Equal(t, "application/x-protobuf", req.Header.Get("Content-Type"))
			assert.NotEmpty(t, req.Header.Get("User-Agent"))
			for k, v := range tc.wantHeaders {
				assert.Equal(t, v, req.Header.Get(k), "header %s", k)
			}
			if tc.wantGzip {
				assert.Equal(t, "gzip", req.Header.Get("Content-Encoding"))
			} else {
				assert.Empty(t, req.Header.Get("Content-Encoding"))
			}
			// The collector decoded gzip: the body is the plain request.
			assert.Equal(t, otlpwire.NewEncodeFunc()(spans), req.Body)
		})
	}
}

// TestConfigTimeout: Config.Timeout bounds the export.
func TestConfigTimeout(t *testing.T) {
	srv := newCollector(t)
	release := make(chan struct{})
	srv.setRespond(func(int, http.ResponseWriter) { <-release })
	defer close(release) // before srv.Close, which waits for handlers
	exp, err := otlpwire.New(otlpwire.Config{EndpointURL: srv.URL + "/v1/traces", Timeout: 150 * time.Millisecond, Retry: otlpwire.DefaultRetry})
	require.NoError(t, err)
	start := time.Now()
	err = exp.ExportSpans(t.Context(), stubSpans())
	assert.ErrorContains(t, err, "deadline exceeded")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	require.NoError(t, exp.Shutdown(t.Context()))
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     otlpwire.Config
		wantErr string
	}{
		{name: "no scheme", cfg: otlpwire.Config{EndpointURL: "localhost:4318"}, wantErr: "endpoint: want an http or https URL"},
		{name: "grpc scheme", cfg: otlpwire.Config{EndpointURL: "grpc://collector:4317"}, wantErr: "endpoint: want an http or https URL"},
		{name: "bad URL", cfg: otlpwire.Config{EndpointURL: "http://[::1"}, wantErr: "endpoint:"},
		{name: "userinfo", cfg: otlpwire.Config{EndpointURL: "https://user:pa55@collector:4318/v1/traces"},
			wantErr: "endpoint: https://[REDACTED]@collector:4318/v1/traces: credentials in an endpoint URL (userinfo) are refused"},
		{name: "userinfo in an invalid URL", cfg: otlpwire.Config{EndpointURL: "t0ken@[::1"}, wantErr: "endpoint: [REDACTED]@[::1: credentials"},
		{name: "userinfo with a slash", cfg: otlpwire.Config{EndpointURL: "http://user:pa55/t0ken@collector:4318"}, wantErr: "endpoint: http://[REDACTED]@collector:4318: credentials"},
		// A TLS configuration with an http endpoint is a mistake, as in
		// otlptracehttp.
		{name: "TLS with http", cfg: otlpwire.Config{EndpointURL: "http://127.0.0.1:4318", TLS: &tls.Config{}}, wantErr: "needs an https endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := otlpwire.New(tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.NotContains(t, err.Error(), "pa55", "a password is never shown")
			assert.NotContains(t, err.Error(), "t0ken", "a user name is never shown")
		})
	}
}
