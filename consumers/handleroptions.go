package consumers

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// HandlerOption hands a stage handler (retrieval.Handler,
// enrichment.Handler, or one of your own) a collaborator. A handler's
// settings are its own Config; its collaborators are HandlerOptions.
type HandlerOption interface{ applyHandler(*HandlerConfig) }

type handlerOptionFunc func(*HandlerConfig)

func (f handlerOptionFunc) applyHandler(c *HandlerConfig) { f(c) }

// HandlerConfig holds a stage handler's collaborators, as
// NewHandlerConfig returns them.
type HandlerConfig struct {
	// TracerProvider creates the handler's own spans.
	TracerProvider trace.TracerProvider
}

// WithTracerProvider sets the tracer provider of a handler's own spans;
// nil is ignored. Default: the global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) HandlerOption {
	return handlerOptionFunc(func(c *HandlerConfig) { c.TracerProvider = tp })
}

// NewHandlerConfig applies opts and fills in the collaborators they leave
// unset with the global ones.
func NewHandlerConfig(opts ...HandlerOption) HandlerConfig {
	var c HandlerConfig
	for _, o := range opts {
		o.applyHandler(&c)
	}
	c.TracerProvider = global.TracerProvider(c.TracerProvider)
	return c
}
