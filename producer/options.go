package producer

import (
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// Option hands a Client or a Collector a collaborator: its tracer
// provider or logger. An option that does not concern the component it is
// given to is ignored.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config holds the collaborators of a Client or a Collector.
type config struct {
	tp     trace.TracerProvider
	logger *slog.Logger
}

// newConfig applies opts and fills in the collaborators they leave unset.
func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	c.tp, c.logger = global.TracerProvider(c.tp), global.Logger(c.logger)
	return c
}

// WithTracerProvider sets the tracer provider of a Client's request spans;
// nil is ignored. Default: the global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithLogger sets the logger of a Collector; nil is ignored. Default:
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}
