// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/trace"
)

// Log attribute keys added by the handler from [NewLogHandler].
const (
	LogKeyTraceID = "trace_id"
	LogKeySpanID  = "span_id"
)

// NewLogHandler wraps h so that records logged with a context carrying a
// valid span context get trace_id and span_id attributes (lowercase hex).
// The two attributes are always at the top level of the record, also when
// the logger has groups from WithGroup. Records without a span are passed
// through unchanged. Wrapping a handler returned by NewLogHandler again
// returns it as is.
func NewLogHandler(h slog.Handler) slog.Handler {
	if lh, ok := h.(*logHandler); ok {
		return lh
	}
	return &logHandler{base: h, cur: h}
}

// logHandler keeps the unwrapped base handler and the WithAttrs/WithGroup
// calls made on it, so that when the chain contains a group it can rebuild
// the chain with the trace attributes in front of it (at top level).
type logHandler struct {
	base    slog.Handler // the handler given to NewLogHandler
	cur     slog.Handler // base with ops applied
	ops     []logOp
	grouped bool // some op is a group
}

// logOp is one WithGroup (group != "") or WithAttrs call.
type logOp struct {
	group string
	attrs []slog.Attr
}

func (h *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.cur.Enabled(ctx, level)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return h.cur.Handle(ctx, r)
	}
	ids := []slog.Attr{
		slog.String(LogKeyTraceID, sc.TraceID().String()),
		slog.String(LogKeySpanID, sc.SpanID().String()),
	}
	if !h.grouped {
		r = r.Clone() // do not share attribute storage with other handlers' copies
		r.AddAttrs(ids...)
		return h.cur.Handle(ctx, r)
	}
	// Rare path: rebuild the chain so the ids sit outside every group.
	hh := h.base.WithAttrs(ids)
	for _, op := range h.ops {
		if op.group != "" {
			hh = hh.WithGroup(op.group)
		} else {
			hh = hh.WithAttrs(op.attrs)
		}
	}
	return hh.Handle(ctx, r)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &logHandler{
		base:    h.base,
		cur:     h.cur.WithAttrs(attrs),
		ops:     append(slices.Clip(h.ops), logOp{attrs: slices.Clone(attrs)}),
		grouped: h.grouped,
	}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &logHandler{
		base:    h.base,
		cur:     h.cur.WithGroup(name),
		ops:     append(slices.Clip(h.ops), logOp{group: name}),
		grouped: true,
	}
}

// NewLogger returns a logger writing to w in format "json" or "text" at
// level "debug", "info", "warn" or "error" (both case-insensitive), through
// [NewLogHandler]. It returns an error for any other format or level.
//
// The logger also sends every record at or above the level to the OTel
// logger provider of the last [Setup] (also installed as the OTel global
// one) through the slog bridge (otelslog), with the trace and span id of
// the record's context: Setup installs one that exports over OTLP unless
// OTEL_LOGS_EXPORTER=none or no OTLP endpoint is set; until then, and
// without Setup, the records only go to w.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "debug":
		lvl = slog.LevelDebug
	case "info":
		lvl = slog.LevelInfo
	case "warn":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, fmt.Errorf("unknown log level %q (want debug, info, warn or error)", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, fmt.Errorf("unknown log format %q (want json or text)", format)
	}
	return slog.New(&fanoutHandler{
		local: NewLogHandler(h),
		otel:  otelslog.NewHandler(logScope, otelslog.WithLoggerProvider(globalLoggerProvider{})),
		level: lvl,
	}), nil
}

// logScope is the instrumentation scope of the log records sent to OTel.
const logScope = "github.com/kretrieve/kretrieve"

// globalLoggerProvider hands out loggers that send to the logger provider
// [Setup] installed last (see installLogs), so a logger built before Setup
// (or before a later Setup in the same process, as in tests) sends to the
// current one. Until Setup runs, records are not sent.
type globalLoggerProvider struct{ embedded.LoggerProvider }

func (globalLoggerProvider) Logger(name string, _ ...otellog.LoggerOption) otellog.Logger {
	return globalLogger{name: name}
}

type globalLogger struct {
	embedded.Logger
	name string
}

func (l globalLogger) Emit(ctx context.Context, r otellog.Record) {
	installedLogs.Load().logger(l.name).Emit(ctx, r)
}

func (l globalLogger) Enabled(ctx context.Context, p otellog.EnabledParameters) bool {
	return installedLogs.Load().logger(l.name).Enabled(ctx, p)
}

// logTarget is a logger provider with the loggers it handed out, by name:
// creating an SDK logger is too costly to do per record.
type logTarget struct {
	provider otellog.LoggerProvider
	loggers  sync.Map // name -> otellog.Logger
}

// installedLogs is the logger provider of the last Setup.
var installedLogs atomic.Pointer[logTarget]

func init() { installLogs(lognoop.NewLoggerProvider()) }

// installLogs makes p the provider of the loggers from [NewLogger].
func installLogs(p otellog.LoggerProvider) {
	installedLogs.Store(&logTarget{provider: p})
}

func (t *logTarget) logger(name string) otellog.Logger {
	if l, ok := t.loggers.Load(name); ok {
		return l.(otellog.Logger)
	}
	l, _ := t.loggers.LoadOrStore(name, t.provider.Logger(name))
	return l.(otellog.Logger)
}

// fanoutHandler hands each record to the local handler (stderr, with
// trace_id and span_id attributes) and, at or above level, to the OTel
// slog bridge (which carries the ids in the record's trace context).
type fanoutHandler struct {
	local, otel slog.Handler
	level       slog.Level
}

func (h *fanoutHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.local.Enabled(ctx, l) || (l >= h.level && h.otel.Enabled(ctx, l))
}

func (h *fanoutHandler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	if h.local.Enabled(ctx, r.Level) {
		errs = append(errs, h.local.Handle(ctx, r.Clone()))
	}
	if r.Level >= h.level && h.otel.Enabled(ctx, r.Level) {
		errs = append(errs, h.otel.Handle(ctx, r))
	}
	return errors.Join(errs...)
}

func (h *fanoutHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &fanoutHandler{local: h.local.WithAttrs(attrs), otel: h.otel.WithAttrs(attrs), level: h.level}
}

func (h *fanoutHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &fanoutHandler{local: h.local.WithGroup(name), otel: h.otel.WithGroup(name), level: h.level}
}

// localLogger returns l without its OTel part when l comes from
// [NewLogger]: the SDK's own errors (failed log exports among them) must
// not be fed back into the log exporter.
func localLogger(l *slog.Logger) *slog.Logger {
	if h, ok := l.Handler().(*fanoutHandler); ok {
		return slog.New(h.local)
	}
	return l
}
