// SPDX-License-Identifier: Apache-2.0

package results

import (
	"cmp"
	"log/slog"

	"github.com/kretrieve/kretrieve/internal/global"
)

// ScopeName is the instrumentation scope of the Collector's metrics.
const ScopeName = "github.com/kretrieve/kretrieve/results"

// Option configures a Collector. Only this package's With* functions make
// one; a nil Option is ignored.
type Option interface{ apply(*options) }

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options are a Collector's collaborators.
type options struct {
	logger *slog.Logger
}

// WithLogger sets the logger of fetch errors and undecodable records; nil
// is ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(o *options) { o.logger = cmp.Or(l, o.logger) })
}

// newOptions applies opts in order and falls back to the globals for what
// they leave unset.
func newOptions(opts []Option) (o options) {
	global.Apply(&o, opts, Option.apply)
	o.logger = global.Logger(o.logger)
	return o
}
