// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"cmp"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// Option configures a Gateway: its tracer provider, meter provider,
// propagator or logger (its settings are fields of Config). Only this
// package's With* functions make one; a nil Option is ignored.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is a Gateway's Config with its defaults, and its collaborators.
type config struct {
	Config
	global.Collaborators
	// queueWait is WithQueueWait's source, nil without one.
	queueWait func() (time.Duration, bool)
}

// WithTracerProvider sets the tracer provider of the server spans; nil is
// ignored. Default: the global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.TracerProvider = cmp.Or(tp, c.TracerProvider) })
}

// WithMeterProvider sets the meter provider of the HTTP and admission
// metrics; nil is ignored. Default: the global provider
// (otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.MeterProvider = cmp.Or(mp, c.MeterProvider) })
}

// WithPropagator sets the propagator that reads the incoming trace context
// (limited, and at a trust boundary filtered, as Config says); nil is
// ignored. Default: the global propagator (otel.GetTextMapPropagator()).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.Propagator = cmp.Or(p, c.Propagator) })
}

// WithLogger sets the logger of failed requests and of the server's errors;
// nil is ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.Logger = cmp.Or(l, c.Logger) })
}

// WithQueueWait gives the gateway the current queue wait of the
// pipeline's first edge (the requests topic to the first stage): wait is
// how long a request published now would sit before the first stage took
// it, ok false when it is not known (then nothing is refused for it). A
// search whose budget (Config.Timeout) that wait exceeds cannot be
// answered in time: it is refused at once with 503 and Retry-After, and
// counted in otelnames.MetricGatewayRefused with
// otelnames.RefusedReason "queue_wait". fn must be cheap: it runs for
// every search. Default: none (no refusal by queue wait).
func WithQueueWait(fn func() (wait time.Duration, ok bool)) Option {
	return optionFunc(func(c *config) {
		if fn != nil {
			c.queueWait = fn
		}
	})
}

// newConfig returns cfg with its defaults and the collaborators of opts,
// the global ones where opts leave them unset.
func newConfig(cfg Config, opts []Option) config {
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.ServerName = cmp.Or(cfg.ServerName, DefaultServerName)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, DefaultMaxInFlight)
	cfg.ReadHeaderTimeout = cmp.Or(cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, DefaultReadTimeout)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.MaxHeaderBytes = cmp.Or(cfg.MaxHeaderBytes, DefaultMaxHeaderBytes)
	cfg.MaxConnections = cmp.Or(cfg.MaxConnections, DefaultMaxConnections)
	cfg.ResultRetention = cmp.Or(cfg.ResultRetention, DefaultResultRetention)
	cfg.MaxResults = cmp.Or(cfg.MaxResults, DefaultMaxResults)
	cfg.MaxResultBytes = cmp.Or(cfg.MaxResultBytes, DefaultMaxResultBytes)
	c := config{Config: cfg}
	global.Apply(&c, opts, Option.apply)
	c.Collaborators = c.Collaborators.Filled()
	return c
}
