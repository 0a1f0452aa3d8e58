// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Bounds of a Store.
const (
	// DefaultMaxTraces is how many traces a Store keeps, the oldest
	// dropped first.
	DefaultMaxTraces = 512
	// DefaultMaxSpansPerTrace caps the spans a Store keeps per trace.
	DefaultMaxSpansPerTrace = 256
)

// Store is the in-process SDK store: a span processor that keeps the spans
// of the process's recent traces while it is on (DefaultMaxTraces traces
// of at most DefaultMaxSpansPerTrace spans each). While off it keeps
// nothing: OnEnd is one atomic load. Register it with the tracer provider;
// its user (the console) turns it on with Start while it is in use. It is
// safe for concurrent use.
type Store struct {
	on atomic.Bool

	mu     sync.Mutex
	traces map[trace.TraceID][]sdktrace.ReadOnlySpan
	order  []trace.TraceID // oldest first
}

var _ sdktrace.SpanProcessor = (*Store)(nil)

// NewStore returns an empty store, off until Start.
func NewStore() *Store {
	return &Store{traces: map[trace.TraceID][]sdktrace.ReadOnlySpan{}}
}

// Start turns keeping on.
func (s *Store) Start() { s.on.Store(true) }

// Stop turns keeping off and drops what was kept.
func (s *Store) Stop() {
	s.on.Store(false)
	s.mu.Lock()
	clear(s.traces)
	s.order = nil
	s.mu.Unlock()
}

// OnStart does nothing.
func (s *Store) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps the span while the store is on.
func (s *Store) OnEnd(sp sdktrace.ReadOnlySpan) {
	if !s.on.Load() {
		return
	}
	id := sp.SpanContext().TraceID()
	s.mu.Lock()
	defer s.mu.Unlock()
	spans, ok := s.traces[id]
	if !ok {
		if len(s.order) >= DefaultMaxTraces {
			delete(s.traces, s.order[0])
			s.order = slices.Delete(s.order, 0, 1)
		}
		s.order = append(s.order, id)
	}
	if len(spans) < DefaultMaxSpansPerTrace {
		s.traces[id] = append(spans, sp)
	}
}

// Shutdown does nothing.
func (s *Store) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (s *Store) ForceFlush(context.Context) error { return nil }

// Trace returns the kept spans of the trace with hex id traceID, in start
// order; none for an id that is not a trace id. It never fails.
func (s *Store) Trace(_ context.Context, traceID string) ([]Span, error) {
	tid, err := trace.TraceIDFromHex(traceID)
	if err != nil {
		return nil, nil
	}
	s.mu.Lock()
	spans := slices.Clone(s.traces[tid])
	s.mu.Unlock()
	return FromReadOnlySpans(spans), nil
}

// Traces returns every kept trace, oldest first, each trace's spans in
// start order. Their DurationMS is not set.
func (s *Store) Traces() []Trace {
	s.mu.Lock()
	kept := make([][]sdktrace.ReadOnlySpan, 0, len(s.order))
	for _, id := range s.order {
		kept = append(kept, slices.Clone(s.traces[id]))
	}
	s.mu.Unlock()
	out := make([]Trace, 0, len(kept))
	for _, spans := range kept {
		conv := FromReadOnlySpans(spans)
		out = append(out, Trace{TraceID: conv[0].TraceID, Spans: conv})
	}
	return out
}
