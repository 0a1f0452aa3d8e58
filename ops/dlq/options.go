// SPDX-License-Identifier: Apache-2.0

package dlq

import (
	"cmp"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// Option configures Replay: its tracer provider or logger. Only this
// package's With* functions make one; a nil Option is ignored.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options are a Replay's collaborators.
type options struct {
	tracerProvider trace.TracerProvider
	logger         *slog.Logger
}

// WithTracerProvider sets the tracer provider of the replay spans; nil is
// ignored. Default: the global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(o *options) { o.tracerProvider = cmp.Or(tp, o.tracerProvider) })
}

// WithLogger sets the logger; nil is ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(o *options) { o.logger = cmp.Or(l, o.logger) })
}

// newOptions applies opts in order and falls back to the globals for what
// they leave unset.
func newOptions(opts []Option) (o options) {
	global.Apply(&o, opts, Option.apply)
	o.tracerProvider, o.logger = global.TracerProvider(o.tracerProvider), global.Logger(o.logger)
	return o
}
