// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// RootSampler takes the sampling decision of a new trace's root span the
// way the tracer provider would, without the provider starting a span:
// under a ratio sampler at 1 %, 99 % of the records a producer starts a
// trace with then cost no SDK span at all. Package tracing builds one for
// the samplers that decide a root span from its trace id alone
// (tracing.NewRootSampler, Providers.RootSampler); it must be the one the
// tracer provider given with [WithTracerProvider] was built with.
type RootSampler interface {
	// SampleRoot draws the trace and span ids of a root span named name,
	// of kind kind, to be started under ctx (whose span context has no
	// valid trace id) without attributes or links, and asks the tracer
	// provider's sampler about it. When the span would not be recording,
	// it returns the span context of the provider's non-recording span
	// (flags and trace state as the provider sets them) and false.
	// Otherwise it returns a context to start the span under, with which
	// the provider draws the same ids (and its sampler decides the same),
	// and true.
	SampleRoot(ctx context.Context, name string, kind trace.SpanKind) (trace.SpanContext, context.Context, bool)
}

// WithRootSampler lets the Tracer take the sampling decision of the root
// send spans it starts (records produced under a context without a span,
// with [WithParentBasedSampling]) through s: a root that is not sampled
// then gets its span context from s, with no span started, and the
// record's Context carries a non-recording span of that context, as the
// tracer provider would have made. s must belong to the Tracer's tracer
// provider (see [RootSampler]); nil is ignored. Default: none (every root
// goes through the provider).
func WithRootSampler(s RootSampler) Option {
	return optionFunc(func(c *config) { c.root = s })
}
