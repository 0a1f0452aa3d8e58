// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/tracing"
)

// A malformed headers variable or an endpoint URL with credentials fails
// Setup with an error naming the variable and the entry, never the secret,
// and nothing printed on stderr (the SDK's own logger included) holds it
// (security finding 8). Each case runs in a child process (the test binary
// again, with the case's variables as JSON in childVar), since the SDK
// logs to the stderr it saw at start-up.
func TestMisconfigurationKeepsSecrets(t *testing.T) {
	const childVar = "KRETRIEVE_TRACING_SECRETS_CHILD"
	if raw := os.Getenv(childVar); raw != "" {
		runSecretsChild(t, raw)
		return
	}
	const secret = "S3CR3T-t0ken"
	const closed = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name, protocol  string
		variable, value string   // set besides OTEL_EXPORTER_OTLP_ENDPOINT=closed
		want            []string // in the error, besides the variable
	}{
		{"headers entry without =", "", "OTEL_EXPORTER_OTLP_HEADERS", "X-Api-Key=k,Authorization Bearer " + secret, []string{"entry 2"}},
		{"headers key holding the secret", "", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "Authorization: Bearer " + secret + "==", []string{"entry 1"}},
		{"headers value with a bad escape", "", "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "Authorization=Bearer%z" + secret, []string{"Authorization"}},
		{"metrics headers typo", "", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "Authorization Bearer " + secret, []string{"entry 1"}},
		{"metrics headers typo over grpc", "grpc", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "Authorization Bearer " + secret, []string{"entry 1"}},
		{"logs headers typo over http/json", "http/json", "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "Authorization Bearer " + secret, nil},
		{"valid endpoint with userinfo", "", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:" + secret + "@127.0.0.1:1", []string{"userinfo", "http://[REDACTED]@127.0.0.1:1"}},
		{"user name alone is the token", "", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://" + secret + "@127.0.0.1:1/v1/traces", []string{"userinfo"}},
		{"invalid endpoint with userinfo", "", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "ftp://user:" + secret + "@127.0.0.1:1/v1/metrics", []string{"userinfo"}},
		{"unparsable endpoint with userinfo", "", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "user:" + secret + "@127.0.0.1:1", []string{"userinfo"}},
		{"grpc endpoint with userinfo", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:" + secret + "@127.0.0.1:1", []string{"userinfo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": closed, "OTEL_EXPORTER_OTLP_PROTOCOL": tc.protocol, tc.variable: tc.value}
			env, err := json.Marshal(vars)
			require.NoError(t, err)
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMisconfigurationKeepsSecrets$", "-test.count=1")
			cmd.Env = append(os.Environ(), childVar+"="+string(env))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "setup failed: ", "Setup refuses the configuration:\n%s", out)
			for _, w := range append(tc.want, tc.variable) {
				assert.Contains(t, string(out), w)
			}
			assert.NotContains(t, string(out), secret)
		})
	}
}

func runSecretsChild(t *testing.T, raw string) {
	var env map[string]string
	require.NoError(t, json.Unmarshal([]byte(raw), &env))
	for k, v := range env {
		if v != "" {
			t.Setenv(k, v)
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	p, err := tracing.Setup(t.Context(), tracing.WithLogger(log), tracing.WithExportRetry(false))
	if err != nil {
		fmt.Fprintf(os.Stderr, "setup failed: %v\n", err)
		return
	}
	fmt.Fprintln(os.Stderr, "setup succeeded")
	emitJob(t, p, log)
	shutdown(t, p)
}
