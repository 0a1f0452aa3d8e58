package console

import (
	"context"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/ops/conformance"
	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/otelnames"
)

// Bounds of a SpanStore.
const (
	// DefaultMaxTraces is how many traces a SpanStore keeps, the oldest
	// dropped first.
	DefaultMaxTraces = 512
	// DefaultMaxSpansPerTrace caps the spans kept per trace.
	DefaultMaxSpansPerTrace = 256
	// maxSlowest is how many requests GET /api/slowest lists.
	maxSlowest = 20
)

// SpanStore is a span processor that keeps the spans of the process's
// recent traces while the console is in use (DefaultMaxTraces traces of at
// most DefaultMaxSpansPerTrace spans each). While no browser asks it keeps
// nothing: OnEnd is one atomic load. Register it with the tracer provider
// and hand it to New with WithSpanStore. It is safe for concurrent use.
type SpanStore struct {
	on atomic.Bool

	mu     sync.Mutex
	traces map[trace.TraceID][]sdktrace.ReadOnlySpan
	order  []trace.TraceID // oldest first
}

var _ sdktrace.SpanProcessor = (*SpanStore)(nil)

// NewSpanStore returns an empty store, off until a console starts it.
func NewSpanStore() *SpanStore {
	return &SpanStore{traces: map[trace.TraceID][]sdktrace.ReadOnlySpan{}}
}

func (s *SpanStore) start() { s.on.Store(true) }

// stop turns keeping off and drops what was kept.
func (s *SpanStore) stop() {
	s.on.Store(false)
	s.mu.Lock()
	clear(s.traces)
	s.order = nil
	s.mu.Unlock()
}

// OnStart does nothing.
func (s *SpanStore) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps the span while the console is in use.
func (s *SpanStore) OnEnd(sp sdktrace.ReadOnlySpan) {
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
func (s *SpanStore) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (s *SpanStore) ForceFlush(context.Context) error { return nil }

// Trace returns the kept spans of the trace with hex id id.
func (s *SpanStore) Trace(id string) []runsummary.Span {
	tid, err := trace.TraceIDFromHex(id)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	spans := slices.Clone(s.traces[tid])
	s.mu.Unlock()
	return convert(spans)
}

// traces returns every kept trace.
func (s *SpanStore) all() []runsummary.Trace {
	s.mu.Lock()
	kept := make([][]sdktrace.ReadOnlySpan, 0, len(s.order))
	for _, id := range s.order {
		kept = append(kept, slices.Clone(s.traces[id]))
	}
	s.mu.Unlock()
	out := make([]runsummary.Trace, 0, len(kept))
	for _, spans := range kept {
		conv := convert(spans)
		out = append(out, runsummary.Trace{TraceID: conv[0].TraceID, Spans: conv})
	}
	return out
}

func convert(spans []sdktrace.ReadOnlySpan) []runsummary.Span {
	out := make([]runsummary.Span, len(spans))
	for i, sp := range spans {
		out[i] = runsummary.FromReadOnly(sp)
	}
	slices.SortStableFunc(out, func(a, b runsummary.Span) int { return int(a.StartTimeUnixNano - b.StartTimeUnixNano) })
	return out
}

// apiSpan is a span as the console's API sends it.
type apiSpan struct {
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id"`
	Name         string `json:"name"`
	Service      string `json:"service"`
	// Kind is PRODUCER, CONSUMER, SERVER, CLIENT or INTERNAL.
	Kind       string `json:"kind"`
	StartUS    int64  `json:"start_us"`
	DurationUS int64  `json:"duration_us"`
	// Category is "wait" (queue wait), "send", "work" (processing and the
	// work inside it) or "other".
	Category   string         `json:"category"`
	Attributes map[string]any `json:"attributes"`
	Status     string         `json:"status"`
	// StatusMessage is the error's description, if any.
	StatusMessage string `json:"status_message,omitempty"`
}

// apiSpans converts a trace's spans, their start relative to the first.
func apiSpans(spans []runsummary.Span) []apiSpan {
	out := make([]apiSpan, 0, len(spans))
	if len(spans) == 0 {
		return out
	}
	first := spans[0].StartTimeUnixNano
	for _, s := range spans {
		first = min(first, s.StartTimeUnixNano)
	}
	for _, s := range spans {
		a := apiSpan{SpanID: s.SpanID, ParentSpanID: s.ParentSpanID, Name: s.Name, Service: s.Service,
			Kind: strings.ToUpper(s.Kind), StartUS: (s.StartTimeUnixNano - first) / 1e3, DurationUS: s.Duration() / 1e3,
			Category: category(s), Attributes: map[string]any{}, Status: "ok", StatusMessage: s.StatusMessage}
		if s.StatusCode == "error" {
			a.Status = "error"
		}
		for _, at := range s.Attributes {
			a.Attributes[at.Key] = at.Value
		}
		out = append(out, a)
	}
	return out
}

func category(s runsummary.Span) string {
	switch {
	case strings.HasPrefix(s.Name, otelnames.OpWait+" "):
		return "wait"
	case strings.HasPrefix(s.Name, otelnames.OpSend+" "):
		return "send"
	case strings.HasPrefix(s.Name, otelnames.OpProcess+" "), s.Kind == "internal" && s.ParentSpanID != "":
		return "work"
	}
	return "other"
}

// validTraceID reports whether id is 32 lower-case hex digits, not all 0.
func validTraceID(id string) bool {
	if len(id) != 32 || strings.ToLower(id) != id {
		return false
	}
	b, err := hex.DecodeString(id)
	return err == nil && slices.ContainsFunc(b, func(c byte) bool { return c != 0 })
}

// lookupTrace finds a trace in the span store, the extra traces, then
// Jaeger. source is "console" or "jaeger"; no spans and no error: unknown.
func (c *Console) lookupTrace(ctx context.Context, id string) (spans []runsummary.Span, source string, err error) {
	if c.collab.spans != nil {
		if spans = c.collab.spans.Trace(id); len(spans) > 0 {
			return spans, "console", nil
		}
	}
	if c.collab.traces != nil {
		for _, t := range c.collab.traces() {
			if t.TraceID == id {
				return t.Spans, "console", nil
			}
		}
	}
	if c.cfg.JaegerURL == "" {
		return nil, "", nil
	}
	spans, err = conformance.FetchJaegerTrace(ctx, c.collab.http, c.cfg.JaegerURL, id)
	return spans, "jaeger", err
}

type traceDoc struct {
	TraceID string    `json:"trace_id"`
	Source  string    `json:"source"`
	Spans   []apiSpan `json:"spans"`
}

func (c *Console) getTrace(w http.ResponseWriter, r *http.Request, _ *live) {
	id := strings.ToLower(r.PathValue("id"))
	if !validTraceID(id) {
		writeError(w, http.StatusBadRequest, "a trace id is 32 hexadecimal digits")
		return
	}
	spans, source, err := c.lookupTrace(r.Context(), id)
	switch {
	case err != nil:
		writeError(w, http.StatusBadGateway, "jaeger: "+err.Error())
	case len(spans) == 0:
		msg := "trace not found in the console's spans"
		if c.cfg.JaegerURL != "" {
			msg += " or in Jaeger"
		}
		writeError(w, http.StatusNotFound, msg)
	default:
		writeJSON(w, http.StatusOK, traceDoc{TraceID: id, Source: source, Spans: apiSpans(spans)})
	}
}

type slowRequest struct {
	TraceID    string    `json:"trace_id"`
	RequestID  string    `json:"request_id"`
	DurationMS float64   `json:"duration_ms"`
	At         time.Time `json:"at"`
}

type exemplar struct {
	TraceID string  `json:"trace_id"`
	Metric  string  `json:"metric"`
	ValueMS float64 `json:"value_ms"`
}

type slowestDoc struct {
	Requests  []slowRequest `json:"requests"`
	Exemplars []exemplar    `json:"exemplars"`
}

// slowest lists the slowest recent requests: the traces of the span store
// and the extra traces, by the duration of their root span; and the
// exemplars of the pathway latency histograms, from the map's pathway
// aggregates.
func (c *Console) slowest(w http.ResponseWriter, r *http.Request, l *live) {
	var traces []runsummary.Trace
	if c.collab.spans != nil {
		traces = c.collab.spans.all()
	}
	if c.collab.traces != nil {
		traces = append(traces, c.collab.traces()...)
	}
	seen := map[string]bool{}
	doc := slowestDoc{Requests: []slowRequest{}, Exemplars: []exemplar{}}
	for _, t := range traces {
		if seen[t.TraceID] {
			continue
		}
		seen[t.TraceID] = true
		// A request's root: the request client's span, or the gateway's
		// server span.
		i := slices.IndexFunc(t.Spans, func(s runsummary.Span) bool {
			return s.ParentSpanID == "" && (s.Name == otelnames.SpanRequest || s.Kind == "server")
		})
		if i < 0 {
			continue // its root is elsewhere (another process), not ended, or not a request
		}
		root := t.Spans[i]
		req := slowRequest{TraceID: t.TraceID, DurationMS: float64(root.Duration()) / 1e6, At: time.Unix(0, root.StartTimeUnixNano).UTC()}
		for _, s := range t.Spans {
			if v, ok := s.Attr(string(otelnames.RequestID)); ok {
				req.RequestID, _ = v.(string)
				break
			}
		}
		doc.Requests = append(doc.Requests, req)
	}
	slices.SortFunc(doc.Requests, func(a, b slowRequest) int {
		switch {
		case a.DurationMS > b.DurationMS:
			return -1
		case a.DurationMS < b.DurationMS:
			return 1
		}
		return strings.Compare(a.TraceID, b.TraceID)
	})
	if len(doc.Requests) > maxSlowest {
		doc.Requests = doc.Requests[:maxSlowest]
	}
	if ex := l.pipelineMap(r.Context()).exemplars; ex != nil {
		doc.Exemplars = ex
	}
	writeJSON(w, http.StatusOK, doc)
}
