// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"context"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
)

// KeepBaggage returns the members of b whose keys are in keep: the trusted
// baggage at a trust boundary.
func KeepBaggage(b baggage.Baggage, keep map[string]bool) baggage.Baggage {
	if b.Len() == 0 || len(keep) == 0 {
		return baggage.Baggage{}
	}
	var kept []baggage.Member
	for _, m := range b.Members() {
		if keep[m.Key()] {
			kept = append(kept, m)
		}
	}
	// The members come from a parsed baggage: New cannot fail on them
	// nor exceed its limits.
	kb, _ := baggage.New(kept...)
	return kb
}

// TrustBoundaryPropagator returns [LimitPropagator](p) whose Extract also
// drops every baggage member whose key is not in allowedBaggage: for a
// server at a trust boundary, such as the HTTP gateway, whose server spans
// are new roots linked to the extracted context (otelhttp's public
// endpoints). The extracted span context is kept, for that link. Inject and
// Fields are p's.
func TrustBoundaryPropagator(p propagation.TextMapPropagator, allowedBaggage ...string) propagation.TextMapPropagator {
	keep := make(map[string]bool, len(allowedBaggage))
	for _, k := range allowedBaggage {
		keep[k] = true
	}
	return boundaryPropagator{limitPropagator{p}, keep}
}

type boundaryPropagator struct {
	limitPropagator
	keep map[string]bool
}

func (b boundaryPropagator) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	ctx = b.limitPropagator.Extract(ctx, carrier)
	if bg := baggage.FromContext(ctx); bg.Len() > 0 {
		ctx = baggage.ContextWithBaggage(ctx, KeepBaggage(bg, b.keep))
	}
	return ctx
}
