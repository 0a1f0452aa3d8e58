// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/tracing"
)

// Attribute values are cut to a safe length by default (security finding
// 4: 1 MB client headers went into spans), and the OTEL_*_ATTRIBUTE_VALUE_
// LENGTH_LIMIT variables change the limit, for spans and log records.
func TestAttributeValueLengthLimits(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name              string
		env               map[string]string
		wantSpan, wantLog int
	}{
		{name: "default", wantSpan: tracing.DefaultAttributeValueLengthLimit, wantLog: tracing.DefaultAttributeValueLengthLimit},
		{name: "general variable", env: map[string]string{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "100"}, wantSpan: 100, wantLog: 100},
		{name: "per-signal variables win", env: map[string]string{
			"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT":           "100",
			"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT":      "10",
			"OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT": "20",
		}, wantSpan: 10, wantLog: 20},
		{name: "negative is no limit", env: map[string]string{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "-1"}, wantSpan: len(huge), wantLog: len(huge)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := otlptest.NewServer(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
			t.Setenv("OTEL_METRICS_EXPORTER", "none")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			log, err := tracing.NewLogger(&syncbuf.Buffer{}, "text", "info")
			require.NoError(t, err)
			p, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
			require.NoError(t, err)
			ctx, span := p.TracerProvider.Tracer("test").Start(t.Context(), "request",
				trace.WithAttributes(attribute.String("user_agent.original", huge)))
			log.InfoContext(ctx, "request", "user_agent.original", huge)
			span.End()
			shutdown(t, p)

			spans := srv.Spans()
			require.Len(t, spans, 1)
			assert.Equal(t, tc.wantSpan, valueLen(t, spans[0].Attributes["user_agent.original"]), "span attribute length")
			logs := srv.Logs()
			require.Len(t, logs, 1)
			assert.Equal(t, tc.wantLog, valueLen(t, logs[0].Attributes["user_agent.original"]), "log attribute length")
		})
	}
}

func TestAttributeValueLengthLimitInvalid(t *testing.T) {
	for _, name := range []string{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "4k")
			log, _ := testLogger()
			_, err := tracing.Setup(t.Context(), tracing.WithLogger(log))
			require.Error(t, err)
			assert.Contains(t, err.Error(), name)
			assert.Contains(t, err.Error(), `"4k"`)
		})
	}
}

// valueLen returns the length of v, which must be a string (a failure does
// not print a megabyte).
func valueLen(t *testing.T, v any) int {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "attribute is %T, want a string", v)
	return len(s)
}
