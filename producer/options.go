package producer

import (
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// Option hands a Client or a Collector a collaborator: its tracer
// provider or logger. Only the With* functions make one; an option that
// does not concern the component it is given to is ignored.
type Option = global.Option

// WithTracerProvider sets the tracer provider of a Client's request spans;
// nil is ignored. Default: the global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option { return global.WithTracerProvider(tp) }

// WithLogger sets the logger of a Collector; nil is ignored. Default:
// slog.Default().
func WithLogger(l *slog.Logger) Option { return global.WithLogger(l) }
