package consumers

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
)

// HandlerOption hands a stage handler (retrieval.Handler,
// enrichment.Handler, or one of your own) a collaborator. A handler's
// settings are its own Config; its collaborators are HandlerOptions.
// Only the With* functions make one.
type HandlerOption = global.Option

// HandlerConfig holds a stage handler's collaborators, as
// NewHandlerConfig returns them.
type HandlerConfig struct {
	// TracerProvider creates the handler's own spans.
	TracerProvider trace.TracerProvider
}

// WithTracerProvider sets the tracer provider of a handler's own spans;
// nil is ignored. Default: the global provider (otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) HandlerOption { return global.WithTracerProvider(tp) }

// NewHandlerConfig applies opts and fills in the collaborators they leave
// unset with the global ones.
func NewHandlerConfig(opts ...HandlerOption) HandlerConfig {
	return HandlerConfig{TracerProvider: global.New(opts).TracerProvider}
}
