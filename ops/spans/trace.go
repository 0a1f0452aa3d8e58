// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"context"
	"sort"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Trace is one request's spans, in start order.
type Trace struct {
	TraceID string `json:"trace_id"`
	// DurationMS is the root span's duration.
	DurationMS float64 `json:"duration_ms"`
	Spans      []Span  `json:"spans"`
}

// Source is a place spans come from: the Store, Traces (a spans file, a
// run's slowest requests) or Jaeger.
type Source interface {
	// Trace returns the spans of the trace with hex id traceID, in start
	// order. A trace the source does not hold returns no spans and no
	// error.
	Trace(ctx context.Context, traceID string) ([]Span, error)
}

var (
	_ Source = (*Store)(nil)
	_ Source = Traces(nil)
	_ Source = TracesFunc(nil)
	_ Source = Jaeger{}
)

// Traces are traces held in memory, such as a spans file's (GroupTraces)
// or the slowest requests a run kept; as a Source, the spans of the first
// with the trace id asked for.
type Traces []Trace

// Trace returns the spans of the first trace with id traceID.
func (ts Traces) Trace(_ context.Context, traceID string) ([]Span, error) {
	for _, t := range ts {
		if t.TraceID == traceID {
			return t.Spans, nil
		}
	}
	return nil, nil
}

// TracesFunc returns traces held in memory when asked, such as
// runsummary.Recorder.Traces; as a Source, like Traces.
type TracesFunc func() []Trace

// Trace returns the spans of the first trace f returns with id traceID.
func (f TracesFunc) Trace(ctx context.Context, traceID string) ([]Span, error) {
	return Traces(f()).Trace(ctx, traceID)
}

// FromReadOnlySpans converts finished SDK spans (see FromReadOnly), in
// start order.
func FromReadOnlySpans(ros []sdktrace.ReadOnlySpan) []Span {
	out := make([]Span, len(ros))
	for i, ro := range ros {
		out[i] = FromReadOnly(ro)
	}
	sortByStart(out)
	return out
}

// GroupTraces groups spans by trace, each trace's spans in start order, the
// traces longest first. A trace's duration is its root span's: the earliest
// span without a parent, else the earliest whose parent is not among the
// trace's spans (recorded by another process).
func GroupTraces(spans []Span) []Trace {
	byID := map[string]*Trace{}
	var order []*Trace
	for _, s := range spans {
		t := byID[s.TraceID]
		if t == nil {
			t = &Trace{TraceID: s.TraceID}
			byID[s.TraceID] = t
			order = append(order, t)
		}
		t.Spans = append(t.Spans, s)
	}
	out := make([]Trace, 0, len(order))
	for _, t := range order {
		sortByStart(t.Spans)
		t.DurationMS = float64(rootDuration(t.Spans)) / 1e6
		out = append(out, *t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DurationMS > out[j].DurationMS })
	return out
}

// rootDuration returns the duration (ns) of the root of spans (in start
// order), see GroupTraces.
func rootDuration(spans []Span) int64 {
	for _, s := range spans {
		if s.ParentSpanID == "" {
			return s.Duration()
		}
	}
	ids := make(map[string]bool, len(spans))
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	for _, s := range spans {
		if !ids[s.ParentSpanID] {
			return s.Duration()
		}
	}
	return 0 // a cycle of parents: not a trace
}

func sortByStart(spans []Span) {
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].StartTimeUnixNano < spans[j].StartTimeUnixNano })
}
