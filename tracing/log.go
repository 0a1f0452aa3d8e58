package tracing

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

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
	return slog.New(NewLogHandler(h)), nil
}
