// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/tracing"
)

var (
	testTraceID = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	testSpanID  = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

const (
	testTraceHex = "4bf92f3577b34da6a3ce929d0e0e4736"
	testSpanHex  = "00f067aa0ba902b7"
)

func spanContext(ctx context.Context) context.Context {
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: testTraceID, SpanID: testSpanID, TraceFlags: trace.FlagsSampled,
	}))
}

// decode parses one JSON log line.
func decode(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m), buf.String())
	buf.Reset()
	return m
}

func TestLogHandlerJSON(t *testing.T) {
	for _, tc := range []struct {
		name      string
		logger    func(*slog.Logger) *slog.Logger
		withSpan  bool
		wantAttrs map[string]any // checked at top level in addition to ids
		wantGroup map[string]any // contents of group "req", if any
	}{
		{name: "no span", logger: func(l *slog.Logger) *slog.Logger { return l }},
		{name: "span", logger: func(l *slog.Logger) *slog.Logger { return l }, withSpan: true},
		{
			name:      "WithAttrs",
			logger:    func(l *slog.Logger) *slog.Logger { return l.With("topic", "requests") },
			withSpan:  true,
			wantAttrs: map[string]any{"topic": "requests"},
		},
		{
			name:      "WithGroup",
			logger:    func(l *slog.Logger) *slog.Logger { return l.WithGroup("req").With("partition", 3) },
			withSpan:  true,
			wantGroup: map[string]any{"partition": float64(3), "k": "v"},
		},
		{
			name:      "WithAttrs then WithGroup",
			logger:    func(l *slog.Logger) *slog.Logger { return l.With("topic", "requests").WithGroup("req") },
			withSpan:  true,
			wantAttrs: map[string]any{"topic": "requests"},
			wantGroup: map[string]any{"k": "v"},
		},
		{
			name:      "WithGroup without span",
			logger:    func(l *slog.Logger) *slog.Logger { return l.WithGroup("req").With("partition", 3) },
			wantGroup: map[string]any{"partition": float64(3), "k": "v"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			base := slog.New(tracing.NewLogHandler(slog.NewJSONHandler(&buf, nil)))
			l := tc.logger(base)
			ctx := t.Context()
			if tc.withSpan {
				ctx = spanContext(ctx)
			}
			l.InfoContext(ctx, "hello", "k", "v")
			m := decode(t, &buf)

			if tc.withSpan {
				assert.Equal(t, testTraceHex, m["trace_id"])
				assert.Equal(t, testSpanHex, m["span_id"])
			} else {
				assert.NotContains(t, m, "trace_id")
				assert.NotContains(t, m, "span_id")
			}
			for k, v := range tc.wantAttrs {
				assert.Equal(t, v, m[k], k)
			}
			if tc.wantGroup != nil {
				assert.Equal(t, tc.wantGroup, m["req"])
				assert.NotContains(t, m, "k", "record attrs stay in the group")
			} else {
				assert.Equal(t, "v", m["k"])
			}
			assert.Equal(t, "hello", m["msg"])

			// The derived logger keeps working without a span, and the
			// base logger is unaffected by the derived one.
			l.Info("again")
			assert.NotContains(t, decode(t, &buf), "trace_id")
			base.InfoContext(ctx, "base")
			assert.NotContains(t, decode(t, &buf), "req")
		})
	}
}

func TestLogHandlerRealSpan(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { require.NoError(t, tp.Shutdown(context.WithoutCancel(t.Context()))) })
	ctx, span := tp.Tracer("test").Start(t.Context(), "op")
	defer span.End()

	var buf bytes.Buffer
	l := slog.New(tracing.NewLogHandler(slog.NewJSONHandler(&buf, nil)))
	l.InfoContext(ctx, "inside")
	m := decode(t, &buf)
	assert.Equal(t, span.SpanContext().TraceID().String(), m["trace_id"])
	assert.Equal(t, span.SpanContext().SpanID().String(), m["span_id"])
	assert.Regexp(t, "^[0-9a-f]{32}$", m["trace_id"])
	assert.Regexp(t, "^[0-9a-f]{16}$", m["span_id"])
}

func TestLogHandlerNestedGroupsKeepIDsTopLevel(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(tracing.NewLogHandler(slog.NewJSONHandler(&buf, nil))).
		With("a", 1).WithGroup("g1").With("b", 2).WithGroup("g2")
	l.InfoContext(spanContext(t.Context()), "x", "c", 3)
	m := decode(t, &buf)
	assert.Equal(t, testTraceHex, m["trace_id"])
	assert.Equal(t, testSpanHex, m["span_id"])
	assert.Equal(t, float64(1), m["a"])
	assert.Equal(t, map[string]any{"b": float64(2), "g2": map[string]any{"c": float64(3)}}, m["g1"])
}

func TestLogHandlerDoesNotDoubleWrap(t *testing.T) {
	h := tracing.NewLogHandler(slog.NewJSONHandler(&bytes.Buffer{}, nil))
	assert.Same(t, h, tracing.NewLogHandler(h))
}

func TestLogHandlerConformance(t *testing.T) {
	var buf bytes.Buffer
	slogtest.Run(t,
		func(*testing.T) slog.Handler {
			buf.Reset()
			return tracing.NewLogHandler(slog.NewJSONHandler(&buf, nil))
		},
		func(t *testing.T) map[string]any { return decode(t, &buf) })
}

func TestNewLogger(t *testing.T) {
	for _, tc := range []struct {
		name, format, level string
		wantErr             string
		check               func(t *testing.T, out string)
	}{
		{name: "json info", format: "json", level: "info", check: func(t *testing.T, out string) {
			assert.NotContains(t, out, `"msg":"debug"`)
			assert.Contains(t, out, `"msg":"info"`)
			assert.Contains(t, out, `"trace_id":"`+testTraceHex+`"`)
			assert.Contains(t, out, `"span_id":"`+testSpanHex+`"`)
		}},
		{name: "json debug", format: "JSON", level: "DEBUG", check: func(t *testing.T, out string) {
			assert.Contains(t, out, `"msg":"debug"`)
		}},
		{name: "text warn", format: "text", level: "warn", check: func(t *testing.T, out string) {
			assert.NotContains(t, out, "msg=info")
			assert.Contains(t, out, "msg=warn")
			assert.Contains(t, out, "trace_id="+testTraceHex)
			assert.Contains(t, out, "span_id="+testSpanHex)
		}},
		{name: "text error", format: "text", level: "error", check: func(t *testing.T, out string) {
			assert.NotContains(t, out, "msg=warn")
			assert.Contains(t, out, "msg=error")
		}},
		{name: "unknown format", format: "yaml", level: "info", wantErr: `unknown log format "yaml"`},
		{name: "unknown level", format: "json", level: "verbose", wantErr: `unknown log level "verbose"`},
		{name: "empty level", format: "json", level: "", wantErr: `unknown log level ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l, err := tracing.NewLogger(&buf, tc.format, tc.level)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Nil(t, l)
				return
			}
			require.NoError(t, err)
			ctx := spanContext(t.Context())
			for _, lvl := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
				l.Log(ctx, lvl, strings.ToLower(lvl.String()))
			}
			tc.check(t, buf.String())
		})
	}
}
