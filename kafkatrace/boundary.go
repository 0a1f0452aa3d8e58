// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/tracecontext"
)

// startAtBoundary starts r's spans at a trust boundary (WithTrustBoundary):
// the record's context is only linked, its sampled flag plays no part (the
// parent-based fast path is not taken) and only its trusted baggage
// reaches the handler. It also returns the record's span context.
func (t *Tracer) startAtBoundary(ctx context.Context, r *kgo.Record, highWatermark int64, p *partitionState, qw QueueWait, now time.Time) (context.Context, trace.Span, QueueWait, trace.SpanContext) {
	in := t.Extract(context.Background(), r)
	remote := trace.SpanContextFromContext(in)
	pctx, span, qw := t.startProcess(t.trustedBaggage(ctx, in), remote, r, highWatermark, p, qw, now)
	return pctx, span, qw, remote
}

// trustedBaggage returns ctx carrying the members of in's baggage whose
// keys are trusted; ctx as it is when there are none.
func (t *Tracer) trustedBaggage(ctx, in context.Context) context.Context {
	if b := tracecontext.KeepBaggage(baggage.FromContext(in), t.trusted); b.Len() > 0 {
		return baggage.ContextWithBaggage(ctx, b)
	}
	return ctx
}

// baggageAttr is a baggage key copied onto process spans and the
// attribute it becomes.
type baggageAttr struct {
	key  string
	attr attribute.Key
}

// setBaggageAttrs copies the allow-listed members of ctx's baggage onto
// span.
func (t *Tracer) setBaggageAttrs(ctx context.Context, span trace.Span) {
	b := baggage.FromContext(ctx)
	if b.Len() == 0 {
		return
	}
	var kvs []attribute.KeyValue
	for _, a := range t.bagAttrs {
		if m := b.Member(a.key); m.Key() != "" {
			kvs = append(kvs, a.attr.String(m.Value()))
		}
	}
	if len(kvs) > 0 {
		span.SetAttributes(kvs...)
	}
}
