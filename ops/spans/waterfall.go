package spans

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kretrieve/kretrieve/otelnames"
)

// WaterfallWidth is the usual width of a waterfall's bars: the trace
// command's default and the run summary's.
const WaterfallWidth = 60

// WriteWaterfall draws one trace's spans as a tree in start order with a bar
// per span on a common time axis, width characters wide; wait spans are
// drawn with '░' so queueing stands out, other spans with '█'. Spans whose
// parent is not among spans (recorded by another process) are drawn as
// roots.
func WriteWaterfall(w io.Writer, spans []Span, width int) error {
	if len(spans) == 0 {
		return errors.New("waterfall: no spans")
	}
	start, end := spans[0].StartTimeUnixNano, spans[0].EndTimeUnixNano
	for _, s := range spans {
		start, end = min(start, s.StartTimeUnixNano), max(end, s.EndTimeUnixNano)
	}
	total := max(end-start, 1)
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "trace %s  %d spans  %.2f ms\n", spans[0].TraceID, len(spans), float64(total)/1e6)
	for _, nd := range tree(spans) {
		s := nd.span
		from := min(int(float64(s.StartTimeUnixNano-start)/float64(total)*float64(width)), width-1)
		n := max(int(float64(s.Duration())/float64(total)*float64(width)), 1)
		n = min(n, width-from)
		fill := "█"
		if strings.HasPrefix(s.Name, otelnames.OpWait+" ") {
			fill = "░"
		}
		bar := strings.Repeat(" ", from) + strings.Repeat(fill, n) + strings.Repeat(" ", max(width-from-n, 0))
		label := strings.Repeat("  ", nd.depth) + s.Name
		fmt.Fprintf(bw, "%-44s %s %9.2f ms  %s\n", truncate(label, 44), bar, float64(s.Duration())/1e6, s.Service)
	}
	return bw.err
}

// node is a span in a tree, at its depth (0 for a root).
type node struct {
	span  Span
	depth int
}

// tree orders spans depth-first from their roots, the roots and each
// span's children in start order. A span whose parent is not among spans
// (recorded by another process) is a root.
func tree(spans []Span) []node {
	children := map[string][]Span{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	var roots []Span
	for _, s := range spans {
		if s.ParentSpanID == "" || !ids[s.ParentSpanID] {
			roots = append(roots, s)
		} else {
			children[s.ParentSpanID] = append(children[s.ParentSpanID], s)
		}
	}
	out := make([]node, 0, len(spans))
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		out = append(out, node{s, depth})
		kids := children[s.SpanID]
		sortByStart(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	sortByStart(roots)
	for _, r := range roots {
		walk(r, 0)
	}
	return out
}

// truncate shortens s to n runes, marking the cut with '…'.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
