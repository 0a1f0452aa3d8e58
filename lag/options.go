// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"cmp"
	"log/slog"

	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/internal/global"
)

// Option configures a Monitor: its meter provider or logger. Only this
// package's With* functions make one; a nil Option is ignored.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options are a Monitor's collaborators.
type options struct {
	meterProvider metric.MeterProvider
	logger        *slog.Logger
}

// WithMeterProvider sets the meter provider the gauges are registered on;
// nil is ignored. Default: the global provider (otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(o *options) { o.meterProvider = cmp.Or(mp, o.meterProvider) })
}

// WithLogger sets the logger measurement errors are logged on; nil is
// ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(o *options) { o.logger = cmp.Or(l, o.logger) })
}

// newOptions applies opts in order and falls back to the globals for what
// they leave unset.
func newOptions(opts []Option) (o options) {
	global.Apply(&o, opts, Option.apply)
	o.meterProvider, o.logger = global.MeterProvider(o.meterProvider), global.Logger(o.logger)
	return o
}
