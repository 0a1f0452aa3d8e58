package otlpwire_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/tracing/otlpwire"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         func(url string) map[string]string
		opts        func(url string) []otlpwire.Option
		wantPath    string
		wantHeaders map[string]string
		wantGzip    bool
	}{
		{
			name:     "base endpoint gets /v1/traces",
			env:      func(u string) map[string]string { return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u} },
			wantPath: "/v1/traces",
		},
		{
			name: "base endpoint with a path",
			env: func(u string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u + "/otlp/"}
			},
			wantPath: "/otlp/v1/traces",
		},
		{
			name: "traces endpoint is used as-is and wins",
			env: func(u string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://127.0.0.1:1",
					"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/custom/traces?ignored=1",
				}
			},
			wantPath: "/custom/traces",
		},
		{
			name: "traces endpoint without a path posts to /",
			env: func(u string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": " " + u + " "}
			},
			wantPath: "/",
		},
		{
			name: "option wins over the variables",
			env: func(string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}
			},
			opts:     func(u string) []otlpwire.Option { return []otlpwire.Option{otlpwire.WithEndpointURL(u + "/opt")} },
			wantPath: "/opt",
		},
		{
			name: "headers are URL-decoded and trimmed",
			env: func(u string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT": u,
					"OTEL_EXPORTER_OTLP_HEADERS":  "api-key=s%3Dcret%2C1 , X-Tenant = acme%20corp,empty=",
				}
			},
			wantPath:    "/v1/traces",
			wantHeaders: map[string]string{"Api-Key": "s=cret,1", "X-Tenant": "acme corp", "Empty": ""},
		},
		{
			name: "traces headers replace the general ones",
			env: func(u string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT":       u,
					"OTEL_EXPORTER_OTLP_HEADERS":        "general=1",
					"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "traces=2",
				}
			},
			wantPath:    "/v1/traces",
			wantHeaders: map[string]string{"Traces": "2", "General": ""},
		},
		{
			name: "WithHeaders replaces the variables",
			env: func(u string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_HEADERS": "env=1"}
			},
			opts: func(string) []otlpwire.Option {
				return []otlpwire.Option{otlpwire.WithHeaders(map[string]string{"opt": "2"})}
			},
			wantPath:    "/v1/traces",
			wantHeaders: map[string]string{"Opt": "2", "Env": ""},
		},
		{
			name: "gzip",
			env: func(u string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}
			},
			wantPath: "/v1/traces",
			wantGzip: true,
		},
		{
			name: "traces compression wins",
			env: func(u string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT":           u,
					"OTEL_EXPORTER_OTLP_COMPRESSION":        "gzip",
					"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none",
				}
			},
			wantPath: "/v1/traces",
		},
		{
			name: "WithCompression wins",
			env: func(u string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_COMPRESSION": "none"}
			},
			opts: func(string) []otlpwire.Option {
				return []otlpwire.Option{otlpwire.WithCompression(otlpwire.GzipCompression)}
			},
			wantPath: "/v1/traces",
			wantGzip: true,
		},
		{
			name: "insecure=true turns https into http",
			env: func(u string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_ENDPOINT": "https" + u[len("http"):],
					"OTEL_EXPORTER_OTLP_INSECURE": "true",
				}
			},
			wantPath: "/v1/traces",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCollector(t)
			opts := []otlpwire.Option{otlpwire.WithGetenv(envMap(tc.env(srv.URL)))}
			if tc.opts != nil {
				opts = append(opts, tc.opts(srv.URL)...)
			}
			exp, err := otlpwire.New(opts...)
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

// The default getenv is the process environment.
func TestEnvironmentFromProcess(t *testing.T) {
	srv := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/from/env")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-env=1")
	exp, err := otlpwire.New()
	require.NoError(t, err)
	require.NoError(t, exp.ExportSpans(t.Context(), stubSpans()))
	require.NoError(t, exp.Shutdown(t.Context()))
	req := srv.only(t)
	assert.Equal(t, "/from/env", req.Path)
	assert.Equal(t, "1", req.Header.Get("X-Env"))
}

func TestTimeoutFromEnvironment(t *testing.T) {
	srv := newCollector(t)
	release := make(chan struct{})
	srv.setRespond(func(int, http.ResponseWriter) { <-release })
	defer close(release) // before srv.Close, which waits for handlers
	for _, tc := range []struct {
		name string
		env  map[string]string
		opts []otlpwire.Option
	}{
		{name: "general", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "150"}},
		{name: "traces wins", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "60000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "150"}},
		{name: "option wins", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "60000"},
			opts: []otlpwire.Option{otlpwire.WithTimeout(150 * time.Millisecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = srv.URL
			exp, err := otlpwire.New(append([]otlpwire.Option{otlpwire.WithGetenv(envMap(tc.env))}, tc.opts...)...)
			require.NoError(t, err)
			start := time.Now()
			err = exp.ExportSpans(t.Context(), stubSpans())
			assert.ErrorContains(t, err, "deadline exceeded")
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
			require.NoError(t, exp.Shutdown(t.Context()))
		})
	}
}

func TestEnvironmentErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("not a certificate"), 0o600))
	for _, tc := range []struct {
		name    string
		env     map[string]string
		opts    []otlpwire.Option
		wantErr string
	}{
		{name: "no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
			wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT: want an http or https URL"},
		{name: "grpc scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "grpc://collector:4317"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: want an http or https URL"},
		{name: "bad option URL", opts: []otlpwire.Option{otlpwire.WithEndpointURL("http://[::1")},
			wantErr: "endpoint:"},
		{name: "timeout not a number", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
			wantErr: `OTEL_EXPORTER_OTLP_TIMEOUT: want a positive number of milliseconds, got "10s"`},
		{name: "negative timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "-1"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{name: "compression", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
			wantErr: `OTEL_EXPORTER_OTLP_COMPRESSION: unsupported compression "zstd"`},
		{name: "header without =", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1,oops"},
			wantErr: `OTEL_EXPORTER_OTLP_HEADERS: invalid header "oops"`},
		{name: "header key", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "bad key=1"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_HEADERS: invalid header"},
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := otlpwire.New(append([]otlpwire.Option{otlpwire.WithGetenv(envMap(tc.env))}, tc.opts...)...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}
