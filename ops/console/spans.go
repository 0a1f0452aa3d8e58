// SPDX-License-Identifier: Apache-2.0

package console

import (
	"context"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/otelnames"
)

// maxSlowest is how many requests GET /api/slowest lists.
const maxSlowest = 20

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
	// Depth is the span's depth in its trace's spans.Tree, 0 for a root:
	// how far the waterfall indents it.
	Depth int `json:"depth"`
}

// apiSpans converts a trace's spans, their start relative to the first, in
// the order the waterfall draws them: spans.Tree's, each with its depth.
func apiSpans(trace []spans.Span) []apiSpan {
	out := make([]apiSpan, 0, len(trace))
	if len(trace) == 0 {
		return out
	}
	first := trace[0].StartTimeUnixNano
	for _, s := range trace {
		first = min(first, s.StartTimeUnixNano)
	}
	for _, nd := range spans.Tree(trace) {
		s := nd.Span
		a := apiSpan{SpanID: s.SpanID, ParentSpanID: s.ParentSpanID, Name: s.Name, Service: s.Service,
			Kind: strings.ToUpper(s.Kind), StartUS: (s.StartTimeUnixNano - first) / 1e3, DurationUS: s.Duration() / 1e3,
			Category: category(s), Attributes: map[string]any{}, Status: "ok", StatusMessage: s.StatusMessage, Depth: nd.Depth}
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

func category(s spans.Span) string {
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

// traceSource is where the console looks a trace up, with the source its
// API names: "console" (its own spans) or "jaeger".
type traceSource struct {
	name string
	spans.Source
}

// traceSources are the span store, the extra traces, then Jaeger: those the
// console has.
func (c *Console) traceSources() []traceSource {
	var out []traceSource
	if c.collab.spans != nil {
		out = append(out, traceSource{"console", c.collab.spans})
	}
	if c.collab.traces != nil {
		out = append(out, traceSource{"console", c.collab.traces})
	}
	if c.cfg.JaegerURL != "" {
		out = append(out, traceSource{"jaeger", spans.Jaeger{URL: c.cfg.JaegerURL, Client: c.collab.http}})
	}
	return out
}

// lookupTrace finds a trace in the first of traceSources that holds it.
// source is "console" or "jaeger"; no spans and no error: unknown.
func (c *Console) lookupTrace(ctx context.Context, id string) (trace []spans.Span, source string, err error) {
	for _, src := range c.traceSources() {
		trace, err = src.Trace(ctx, id)
		if err != nil || len(trace) > 0 {
			return trace, src.name, err
		}
	}
	return nil, "", nil
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
	trace, source, err := c.lookupTrace(r.Context(), id)
	switch {
	case err != nil:
		writeError(w, http.StatusBadGateway, "jaeger: "+err.Error())
	case len(trace) == 0:
		msg := "trace not found in the console's spans"
		if c.cfg.JaegerURL != "" {
			msg += " or in Jaeger"
		}
		writeError(w, http.StatusNotFound, msg)
	default:
		writeJSON(w, http.StatusOK, traceDoc{TraceID: id, Source: source, Spans: apiSpans(trace)})
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
	var traces []spans.Trace
	if c.collab.spans != nil {
		traces = c.collab.spans.Traces()
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
		i := slices.IndexFunc(t.Spans, func(s spans.Span) bool {
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
