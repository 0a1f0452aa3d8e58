// SPDX-License-Identifier: Apache-2.0

package runsummary

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
)

// Stage names used in a Summary.
const (
	StageSend    = "send"
	StageWait    = "wait"
	StageProcess = "process"
)

// Histogram range: 1 µs to 1 h at 3 significant digits.
const (
	minMicros = 1
	maxMicros = int64(time.Hour / time.Microsecond)
	sigFigs   = 3
)

type stageKey struct{ topic, stage string }

// Recorder aggregates span durations: root spans as end-to-end latency,
// send/wait/process spans per topic, and every other span by name (the work
// inside process spans, such as "search" or "rerank").
//
// It also keeps the spans of the slowest completed requests (see
// WithKeepSlowest): a request's spans are collected from the start of its
// root span until the root ends, then kept if the request is among the
// slowest so far (with the spans of that trace that end later, such as the
// result's process span) or dropped. Memory is bounded by
// WithMaxInFlightTraces and WithMaxSpansPerTrace.
//
// It is safe for concurrent use.
type Recorder struct {
	rootName    string
	outcomeAttr string
	cfg         config

	mu     sync.Mutex
	e2e    *hdrhistogram.Histogram
	stages map[stageKey]*hdrhistogram.Histogram
	spans  int64

	inFlight  map[trace.TraceID]*traceSpans // requests whose root has not ended
	kept      slowestHeap                   // the slowest completed requests
	keptByID  map[trace.TraceID]*traceSpans // kept, by trace: for spans ending after the root
	free      []*traceSpans                 // released, to reuse their slices
	untracked int64
	truncated int64
}

var _ sdktrace.SpanProcessor = (*Recorder)(nil)

// NewRecorder returns a Recorder that takes spans named rootName as the
// end-to-end latency of a request. When outcomeAttr is not empty, only root
// spans whose outcomeAttr attribute is "completed" count (and only those
// requests can be kept as the slowest).
func NewRecorder(rootName, outcomeAttr string, opts ...Option) *Recorder {
	cfg := config{keep: DefaultKeepSlowest, maxInFlight: DefaultMaxInFlightTraces, maxSpans: DefaultMaxSpansPerTrace}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	return &Recorder{
		rootName:    rootName,
		outcomeAttr: outcomeAttr,
		cfg:         cfg,
		e2e:         newHist(),
		stages:      make(map[stageKey]*hdrhistogram.Histogram),
		inFlight:    make(map[trace.TraceID]*traceSpans),
		keptByID:    make(map[trace.TraceID]*traceSpans),
	}
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(minMicros, maxMicros, sigFigs) }

// OnStart starts collecting the spans of a request when s is its root span.
func (r *Recorder) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if r.cfg.keep == 0 || s.Name() != r.rootName {
		return
	}
	sc := s.SpanContext()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.inFlight[sc.TraceID()]; ok {
		return // a second root in one trace: the first one decides
	}
	if len(r.inFlight) >= r.cfg.maxInFlight {
		r.untracked++
		return
	}
	t := r.newTrace()
	t.id, t.rootID = sc.TraceID(), sc.SpanID()
	r.inFlight[t.id] = t
}

// OnEnd records the span's duration under its stage and, when its trace is
// collected, keeps the span.
func (r *Recorder) OnEnd(s sdktrace.ReadOnlySpan) {
	name := s.Name()
	micros := min(max(s.EndTime().Sub(s.StartTime()).Microseconds(), minMicros), maxMicros)
	isRoot := name == r.rootName
	ok := true
	var key stageKey
	if isRoot {
		ok = r.outcomeAttr == "" || completed(s, r.outcomeAttr)
	} else {
		key = stageOf(name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spans++
	switch {
	case isRoot && ok:
		_ = r.e2e.RecordValue(micros)
	case !isRoot:
		h := r.stages[key]
		if h == nil {
			h = newHist()
			r.stages[key] = h
		}
		_ = h.RecordValue(micros)
	}
	if len(r.inFlight) > 0 || len(r.keptByID) > 0 {
		r.keep(s, isRoot, ok)
	}
}

func stageOf(name string) stageKey {
	switch {
	case strings.HasPrefix(name, otelnames.OpSend+" "):
		return stageKey{name[len(otelnames.OpSend)+1:], StageSend}
	case strings.HasPrefix(name, otelnames.OpWait+" "):
		return stageKey{name[len(otelnames.OpWait)+1:], StageWait}
	case strings.HasPrefix(name, otelnames.OpProcess+" "):
		return stageKey{name[len(otelnames.OpProcess)+1:], StageProcess}
	}
	return stageKey{"", name}
}

func completed(s sdktrace.ReadOnlySpan, key string) bool {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString() == "completed"
		}
	}
	return false
}

// Shutdown does nothing.
func (r *Recorder) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (r *Recorder) ForceFlush(context.Context) error { return nil }
