// SPDX-License-Identifier: Apache-2.0

package runsummary

import (
	"container/heap"
	"sort"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/ops/spans"
)

// traceSpans collects the spans of one request. The SDK hands every
// processor the same immutable snapshot of an ended span, so keeping it
// costs a slice slot, not a copy.
type traceSpans struct {
	id     trace.TraceID
	rootID trace.SpanID
	spans  []sdktrace.ReadOnlySpan
	dur    time.Duration
}

// maxFree bounds the released traceSpans kept for reuse.
const maxFree = 64

func (r *Recorder) newTrace() *traceSpans {
	if n := len(r.free); n > 0 {
		t := r.free[n-1]
		r.free = r.free[:n-1]
		return t
	}
	return &traceSpans{spans: make([]sdktrace.ReadOnlySpan, 0, 16)}
}

// release drops t's spans and keeps t for reuse.
func (r *Recorder) release(t *traceSpans) {
	clear(t.spans)
	t.spans = t.spans[:0]
	if len(r.free) < maxFree {
		r.free = append(r.free, t)
	}
}

// keep adds s to its request's spans, if they are collected; when s is the
// request's root, the request is finished. Called with r.mu held.
func (r *Recorder) keep(s sdktrace.ReadOnlySpan, isRoot, completed bool) {
	sc := s.SpanContext()
	id := sc.TraceID()
	if t := r.inFlight[id]; t != nil {
		r.add(t, s)
		if isRoot && sc.SpanID() == t.rootID {
			delete(r.inFlight, id)
			t.dur = s.EndTime().Sub(s.StartTime())
			r.finish(t, completed)
		}
		return
	}
	if t := r.keptByID[id]; t != nil {
		r.add(t, s) // ended after its root, such as the result's process span
	}
}

func (r *Recorder) add(t *traceSpans, s sdktrace.ReadOnlySpan) {
	if len(t.spans) >= r.cfg.maxSpans {
		r.truncated++
		return
	}
	t.spans = append(t.spans, s)
}

// finish keeps t if it completed and is among the slowest, else releases it.
func (r *Recorder) finish(t *traceSpans, completed bool) {
	if !completed || len(r.kept) == r.cfg.keep && t.dur <= r.kept[0].dur {
		r.release(t)
		return
	}
	if len(r.kept) == r.cfg.keep {
		out := heap.Pop(&r.kept).(*traceSpans)
		delete(r.keptByID, out.id)
		r.release(out)
	}
	heap.Push(&r.kept, t)
	r.keptByID[t.id] = t
}

// Traces returns the spans of the slowest completed requests recorded so
// far (at most WithKeepSlowest of them), slowest first.
func (r *Recorder) Traces() []spans.Trace {
	r.mu.Lock()
	kept := append([]*traceSpans(nil), r.kept...)
	sort.Slice(kept, func(i, j int) bool { return kept[i].dur > kept[j].dur })
	out := make([]spans.Trace, len(kept))
	for i, t := range kept {
		out[i] = t.export()
	}
	r.mu.Unlock()
	return out
}

// slowest returns the slowest kept request. Called with r.mu held.
func (r *Recorder) slowest() *spans.Trace {
	var top *traceSpans
	for _, t := range r.kept {
		if top == nil || t.dur > top.dur {
			top = t
		}
	}
	if top == nil {
		return nil
	}
	t := top.export()
	return &t
}

func (t *traceSpans) export() spans.Trace {
	return spans.Trace{TraceID: t.id.String(), DurationMS: float64(t.dur) / float64(time.Millisecond), Spans: spans.FromReadOnlySpans(t.spans)}
}

// slowestHeap is a min-heap of requests by duration: the root is the
// fastest of the kept ones, the first to give way.
type slowestHeap []*traceSpans

func (h slowestHeap) Len() int           { return len(h) }
func (h slowestHeap) Less(i, j int) bool { return h[i].dur < h[j].dur }
func (h slowestHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slowestHeap) Push(x any)        { *h = append(*h, x.(*traceSpans)) }
func (h *slowestHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
