// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// HandlerOption hands a stage handler (retrieval.Handler,
// enrichment.Handler, or one of your own) a collaborator. A handler's
// settings are its own Config; its collaborators are HandlerOptions.
// Only this package's With* functions make one, so another package's
// option does not compile in its place.
type HandlerOption interface{ applyHandler(*HandlerConfig) }

// handlerOptionFunc adapts a function to a HandlerOption.
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
	return handlerOptionFunc(func(c *HandlerConfig) {
		if tp != nil {
			c.TracerProvider = tp
		}
	})
}

// NewHandlerConfig applies opts in order (nil ones are skipped) and fills
// in the collaborators they leave unset with the global ones.
func NewHandlerConfig(opts ...HandlerOption) HandlerConfig {
	var c HandlerConfig
	global.Apply(&c, opts, HandlerOption.applyHandler)
	c.TracerProvider = global.TracerProvider(c.TracerProvider)
	return c
}
