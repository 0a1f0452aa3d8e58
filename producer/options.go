// SPDX-License-Identifier: Apache-2.0

package producer

import (
	"cmp"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// Option configures a Client. Only this package's With* functions make
// one; a nil Option is ignored.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options are a Client's collaborators.
type options struct {
	tracerProvider trace.TracerProvider
}

// WithTracerProvider sets the tracer provider of a Client's request spans;
// nil is ignored. Default: the global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(o *options) { o.tracerProvider = cmp.Or(tp, o.tracerProvider) })
}

// newOptions applies opts in order and falls back to the globals for what
// they leave unset.
func newOptions(opts []Option) (o options) {
	global.Apply(&o, opts, Option.apply)
	o.tracerProvider = global.TracerProvider(o.tracerProvider)
	return o
}
