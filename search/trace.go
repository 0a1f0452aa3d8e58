// SPDX-License-Identifier: Apache-2.0

package search

import "context"

// QueryPlan describes the bleve query Search built from a query text.
type QueryPlan struct {
	// Clauses is the number of term clauses searched, over all fields:
	// what the search costs. It is at most 4×MaxQueryTerms.
	Clauses int
	// DroppedTerms is the number of distinct terms left out because the
	// query had more than MaxQueryTerms; the largest over the fields
	// (identifier analysis splits words into more terms than text
	// analysis). Zero for queries within the cap.
	DroppedTerms int
}

// Trace holds functions Search calls as it runs, after the manner of
// net/http/httptrace: the caller puts one in the context with WithTrace and
// learns what Search did without a change to its signature (or to the
// interfaces that wrap it). A nil function is not called.
type Trace struct {
	// QueryPlanned is called once per Search of a non-blank query, with
	// its plan, before the search runs.
	QueryPlanned func(QueryPlan)
}

// traceKey is the context key of a *Trace.
type traceKey struct{}

// WithTrace returns a copy of ctx in which Search calls t's functions. A
// nil t returns ctx unchanged.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, t)
}

// traceFrom returns the Trace in ctx, or nil.
func traceFrom(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}
