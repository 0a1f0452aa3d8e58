// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/tracing"
)

// OTEL_{TRACES,METRICS,LOGS}_EXPORTER=otlp,console exports every signal to
// both the OTLP endpoint and the console.
func TestExporterListExportsToEach(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp,console")
	t.Setenv("OTEL_METRICS_EXPORTER", "console, otlp")
	t.Setenv("OTEL_LOGS_EXPORTER", "otlp,console")
	var console syncbuf.Buffer
	p, log, _ := setupWithLogger(t, tracing.WithConsoleWriter(&console))
	emitJob(t, p, log)
	shutdown(t, p)

	spans := srv.Spans()
	require.Len(t, spans, 1)
	assert.Equal(t, "job", spans[0].Name)
	assert.Contains(t, srv.MetricNames(), "job.items")
	var bodies []string
	for _, l := range srv.Logs() {
		bodies = append(bodies, l.Body)
	}
	assert.Contains(t, bodies, "job done")

	out := console.String()
	assert.Contains(t, out, `"Name":"job"`)
	assert.Contains(t, out, `"Name":"job.items"`)
	assert.Contains(t, out, `"Value":"job done"`)
	assert.Equal(t, tracing.SpanStats{Ended: 1, Exported: 1}, p.Stats(), "one batch to both exporters counts once")
	assert.Equal(t, tracing.DroppedTelemetry{}, p.Dropped())
}

// OTEL_CONFIG_FILE is refused, naming the variable and what to do
// instead, rather than ignored.
func TestConfigFileIsRefused(t *testing.T) {
	t.Setenv("OTEL_CONFIG_FILE", "/etc/otel/sdk.yaml")
	log, _ := testLogger()
	_, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `OTEL_CONFIG_FILE="/etc/otel/sdk.yaml"`)
	assert.Contains(t, err.Error(), "unset OTEL_CONFIG_FILE and configure telemetry with the OTEL_* environment variables")
}
