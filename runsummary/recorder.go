package runsummary

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
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
// inside process spans, such as "search" or "rerank"). It is safe for concurrent use.
type Recorder struct {
	rootName    string
	outcomeAttr string

	mu     sync.Mutex
	e2e    *hdrhistogram.Histogram
	stages map[stageKey]*hdrhistogram.Histogram
	spans  int64
}

var _ sdktrace.SpanProcessor = (*Recorder)(nil)

// NewRecorder returns a Recorder that takes spans named rootName as the
// end-to-end latency of a request. When outcomeAttr is not empty, only root
// spans whose outcomeAttr attribute is "completed" count.
func NewRecorder(rootName, outcomeAttr string) *Recorder {
	return &Recorder{
		rootName:    rootName,
		outcomeAttr: outcomeAttr,
		e2e:         newHist(),
		stages:      make(map[stageKey]*hdrhistogram.Histogram),
	}
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(minMicros, maxMicros, sigFigs) }

// OnStart does nothing.
func (r *Recorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd records the span's duration under its stage.
func (r *Recorder) OnEnd(s sdktrace.ReadOnlySpan) {
	name := s.Name()
	micros := max(s.EndTime().Sub(s.StartTime()).Microseconds(), minMicros)
	var key stageKey
	switch {
	case name == r.rootName:
		if r.outcomeAttr != "" && !completed(s, r.outcomeAttr) {
			r.count()
			return
		}
		r.mu.Lock()
		r.spans++
		_ = r.e2e.RecordValue(min(micros, maxMicros))
		r.mu.Unlock()
		return
	case strings.HasPrefix(name, kafkatrace.OpSend+" "):
		key = stageKey{name[len(kafkatrace.OpSend)+1:], StageSend}
	case strings.HasPrefix(name, kafkatrace.OpWait+" "):
		key = stageKey{name[len(kafkatrace.OpWait)+1:], StageWait}
	case strings.HasPrefix(name, kafkatrace.OpProcess+" "):
		key = stageKey{name[len(kafkatrace.OpProcess)+1:], StageProcess}
	default:
		key = stageKey{"", name}
	}
	r.mu.Lock()
	h := r.stages[key]
	if h == nil {
		h = newHist()
		r.stages[key] = h
	}
	r.spans++
	_ = h.RecordValue(min(micros, maxMicros))
	r.mu.Unlock()
}

func (r *Recorder) count() {
	r.mu.Lock()
	r.spans++
	r.mu.Unlock()
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
