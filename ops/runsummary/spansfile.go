package runsummary

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// WriteSpans writes the spans of traces as JSON lines, one Span per line,
// trace after trace in the order given (the Recorder's Traces: slowest first).
func WriteSpans(w io.Writer, traces []Trace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, t := range traces {
		for _, s := range t.Spans {
			if err := enc.Encode(s); err != nil {
				return fmt.Errorf("write span %s of trace %s: %w", s.SpanID, s.TraceID, err)
			}
		}
	}
	return bw.Flush()
}

// ReadSpans reads a file written by WriteSpans. Blank lines are skipped; a
// line that is not a span is an error naming its line number.
func ReadSpans(r io.Reader) ([]Span, error) {
	br := bufio.NewReader(r)
	var out []Span
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var s Span
			if jerr := json.Unmarshal(b, &s); jerr != nil {
				return out, fmt.Errorf("line %d: %w", line, jerr)
			}
			if s.TraceID == "" || s.SpanID == "" {
				return out, fmt.Errorf("line %d: trace_id and span_id are required", line)
			}
			out = append(out, s)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
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
