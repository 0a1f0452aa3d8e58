// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
)

// traceConfig reads env with otlpEnv, as newSpanExporter does.
func traceConfig(env map[string]string, timeout time.Duration) (otlpwire.Config, error) {
	return otlpEnv{getenv: func(k string) string { return env[k] }, readFile: os.ReadFile}.traceConfig(timeout)
}

// TestOTLPEnvironment: the OTEL_EXPORTER_OTLP_* variables become the
// exporter's Config as otlptracehttp reads them (the TRACES_ variant wins).
func TestOTLPEnvironment(t *testing.T) {
	const u = "http://127.0.0.1:4318"
	for _, tc := range []struct {
		name        string
		env         map[string]string
		timeout     time.Duration
		wantURL     string
		wantHeaders map[string]string
		wantGzip    bool
		wantTimeout time.Duration
	}{
		{name: "nothing set: the default endpoint", env: map[string]string{}, wantURL: otlpwire.DefaultEndpoint},
		{name: "base endpoint gets /v1/traces", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u}, wantURL: u + "/v1/traces"},
		{name: "base endpoint with a path", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u + "/otlp/"}, wantURL: u + "/otlp/v1/traces"},
		{name: "traces endpoint is used as-is and wins", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://127.0.0.1:1",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/custom/traces?ignored=1",
		}, wantURL: u + "/custom/traces"},
		{name: "traces endpoint without a path posts to /", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": " " + u + " "}, wantURL: u + "/"},
		{name: "headers are URL-decoded and trimmed", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": u,
			"OTEL_EXPORTER_OTLP_HEADERS":  "api-key=s%3Dcret%2C1 , X-Tenant = acme%20corp,empty=",
		}, wantURL: u + "/v1/traces", wantHeaders: map[string]string{"api-key": "s=cret,1", "X-Tenant": "acme corp", "empty": ""}},
		{name: "traces headers replace the general ones", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":       u,
			"OTEL_EXPORTER_OTLP_HEADERS":        "general=1",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "traces=2",
		}, wantURL: u + "/v1/traces", wantHeaders: map[string]string{"traces": "2"}},
		{name: "gzip", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"},
			wantURL: u + "/v1/traces", wantGzip: true},
		{name: "traces compression wins", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":           u,
			"OTEL_EXPORTER_OTLP_COMPRESSION":        "gzip",
			"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none",
		}, wantURL: u + "/v1/traces"},
		{name: "insecure=true turns https into http", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_INSECURE": "true",
		}, wantURL: u + "/v1/traces"},
		{name: "insecure=false turns http into https", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":        u,
			"OTEL_EXPORTER_OTLP_TRACES_INSECURE": "false",
		}, wantURL: "https://127.0.0.1:4318/v1/traces"},
		{name: "timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "150"}, wantURL: otlpwire.DefaultEndpoint, wantTimeout: 150 * time.Millisecond},
		{name: "traces timeout wins", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "60000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "150"},
			wantURL: otlpwire.DefaultEndpoint, wantTimeout: 150 * time.Millisecond},
		{name: "WithExporterTimeout wins, the variable is not read", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
			timeout: 150 * time.Millisecond, wantURL: otlpwire.DefaultEndpoint, wantTimeout: 150 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := traceConfig(tc.env, tc.timeout)
			require.NoError(t, err)
			assert.Equal(t, tc.wantURL, cfg.EndpointURL)
			assert.Equal(t, tc.wantHeaders, cfg.Headers)
			assert.Equal(t, tc.wantGzip, cfg.Compression == otlpwire.GzipCompression)
			if tc.wantTimeout == 0 {
				tc.wantTimeout = otlpwire.DefaultTimeout
			}
			assert.Equal(t, tc.wantTimeout, cfg.Timeout)
			assert.Equal(t, otlpwire.DefaultRetry, cfg.Retry)
			assert.Nil(t, cfg.TLS)
			// otlpwire accepts every Config read from valid variables.
			exp, err := otlpwire.New(cfg)
			require.NoError(t, err)
			require.NoError(t, exp.Shutdown(t.Context()))
		})
	}
}

// The default getenv is the process environment, and newSpanExporter
// sends where it says.
func TestOTLPEnvironmentFromProcess(t *testing.T) {
	var (
		mu           sync.Mutex
		path, header string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		path, header = r.URL.Path, r.Header.Get("X-Env")
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/from/env")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-env=1")
	exp, err := newSpanExporter(t.Context(), newConfig(nil), exportOTLP)
	require.NoError(t, err)
	require.NoError(t, exp.ExportSpans(t.Context(), tracetest.SpanStubs{{Name: "s"}}.Snapshots()))
	require.NoError(t, exp.Shutdown(t.Context()))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "/from/env", path)
	assert.Equal(t, "1", header)
}

func TestOTLPEnvironmentErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("not a certificate"), 0o600))
	ca := tlstest.NewCA(t, "otlpenv")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{name: "no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
			wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT: want an http or https URL"},
		{name: "grpc scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "grpc://collector:4317"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: want an http or https URL"},
		{name: "bad URL", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://[::1"},
			wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT:"},
		{name: "timeout not a number", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
			wantErr: `OTEL_EXPORTER_OTLP_TIMEOUT: want a positive number of milliseconds, got "10s"`},
		{name: "negative timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "-1"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{name: "compression", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
			wantErr: `OTEL_EXPORTER_OTLP_COMPRESSION: unsupported compression "zstd"`},
		{name: "header without =", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1,oops"},
			wantErr: `OTEL_EXPORTER_OTLP_HEADERS: entry 2 of 2 is not name=value`},
		{name: "header key", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "bad key=1"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 1 of 1 is not name=value"},
		{name: "header escape", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=%zz"},
			wantErr: "OTEL_EXPORTER_OTLP_HEADERS: header a"},
		{name: "missing CA file", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "missing.pem")},
			wantErr: "OTEL_EXPORTER_OTLP_CERTIFICATE: open"},
		{name: "CA file without certificate", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": garbage},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: no PEM certificate"},
		{name: "client certificate without key", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": garbage},
			wantErr: "must be set together"},
		{name: "bad client key pair", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": garbage, "OTEL_EXPORTER_OTLP_CLIENT_KEY": garbage},
			wantErr: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		// A TLS configuration with an http endpoint is a mistake, as in
		// otlptracehttp.
		{name: "TLS with http", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_CERTIFICATE": ca.CertFile},
			wantErr: "needs an https endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := traceConfig(tc.env, 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// TestOTLPEnvironmentMutualTLS: the certificate variables, general or per
// signal, reach a collector that requires a client certificate.
func TestOTLPEnvironmentMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "otlpenv")
	server, client := ca.Server("collector"), ca.Client("otlpwire-client")
	type request struct{ path, auth, cn string }
	var (
		mu   sync.Mutex
		reqs []request
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		reqs = append(reqs, request{r.URL.Path, r.Header.Get("Authorization"), r.TLS.PeerCertificates[0].Subject.CommonName})
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{server.Cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	for _, prefix := range []string{"OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_"} {
		t.Run(prefix, func(t *testing.T) {
			cfg, err := traceConfig(map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT":  srv.URL,
				prefix + "CERTIFICATE":         ca.CertFile,
				prefix + "CLIENT_CERTIFICATE":  client.CertFile,
				prefix + "CLIENT_KEY":          client.KeyFile,
				"OTEL_EXPORTER_OTLP_HEADERS":   "authorization=Bearer%20t0ken",
				"OTEL_EXPORTER_OTLP_TIMEOUT":   "5000",
				"OTEL_EXPORTER_OTLP_INSECURE":  "false",
				"OTEL_EXPORTER_OTLP_PROTOCOL":  "http/protobuf",
				"OTEL_EXPORTER_OTLP_UNRELATED": "x",
			}, 0)
			require.NoError(t, err)
			exp, err := otlpwire.New(cfg)
			require.NoError(t, err)
			require.NoError(t, exp.ExportSpans(t.Context(), tracetest.SpanStubs{{Name: "s"}}.Snapshots()))
			require.NoError(t, exp.Shutdown(t.Context()))
		})
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, request{"/v1/traces", "Bearer t0ken", "otlpwire-client"}, r)
	}
}
