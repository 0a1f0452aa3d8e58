// SPDX-License-Identifier: Apache-2.0

package consumers

import "log/slog"

// Option configures a Worker beyond its Config.
type Option interface{ apply(*Worker) }

type optionFunc func(*Worker)

func (f optionFunc) apply(w *Worker) { f(w) }

// WithLogger sets the logger; nil is ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return optionFunc(func(w *Worker) { w.logger = l }) }

// WithChain replaces the middleware each record runs through, outermost
// first; nil or empty leaves none. Start from DefaultMiddleware(cfg) to add
// a middleware at a place of your choosing or to reorder them. Default:
// DefaultMiddleware(cfg), whose doc gives the order.
func WithChain(mws ...Middleware) Option {
	return optionFunc(func(w *Worker) { w.chain, w.chainSet = mws, true })
}

// WithMiddleware adds middleware inside the chain (DefaultMiddleware's or
// WithChain's), around the handler. Default: none.
func WithMiddleware(mws ...Middleware) Option {
	return optionFunc(func(w *Worker) { w.middleware = append(w.middleware, mws...) })
}
