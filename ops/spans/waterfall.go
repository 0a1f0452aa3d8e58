// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kretrieve/kretrieve/internal/termsafe"
	"github.com/kretrieve/kretrieve/otelnames"
)

// WaterfallWidth is the usual width of a waterfall's bars: the trace
// command's default and the run summary's.
const WaterfallWidth = 60

// Bounds of a waterfall, whatever trace it is given: its bars are
// MinWaterfallWidth to MaxWaterfallWidth characters wide, it draws at most
// MaxWaterfallSpans spans (a last line counts the others) and indents
// labels at most maxIndent levels.
const (
	MinWaterfallWidth = 10
	MaxWaterfallWidth = 500
	MaxWaterfallSpans = 1000
	maxIndent         = 16
)

// WriteWaterfall draws one trace's spans as their Tree, with a bar per span
// on a common time axis, width characters wide (within MinWaterfallWidth
// and MaxWaterfallWidth); wait spans are drawn with '░' so queueing stands
// out, other spans with '█'. Spans whose parent is not among spans
// (recorded by another process) are drawn as roots. Trace ids, span names
// and services are printed with their control and format characters
// escaped (termsafe.Escape): spans come from other processes and from
// Jaeger. It stops with ctx's error when ctx is done.
func WriteWaterfall(ctx context.Context, w io.Writer, spans []Span, width int) error {
	if len(spans) == 0 {
		return errors.New("waterfall: no spans")
	}
	width = min(max(width, MinWaterfallWidth), MaxWaterfallWidth)
	// In float64: the span of int64 timestamps may overflow an int64.
	start, end := float64(spans[0].StartTimeUnixNano), float64(spans[0].EndTimeUnixNano)
	for _, s := range spans {
		start, end = min(start, float64(s.StartTimeUnixNano)), max(end, float64(s.EndTimeUnixNano))
	}
	total := max(end-start, 1)
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "trace %s  %d spans  %.2f ms\n", termsafe.Escape(spans[0].TraceID), len(spans), total/1e6)
	for i, nd := range Tree(spans) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i == MaxWaterfallSpans {
			fmt.Fprintf(bw, "… %d more spans not drawn\n", len(spans)-i)
			break
		}
		s := nd.Span
		dur := float64(s.EndTimeUnixNano) - float64(s.StartTimeUnixNano)
		from := int(min(max((float64(s.StartTimeUnixNano)-start)/total*float64(width), 0), float64(width-1)))
		n := int(min(max(dur/total*float64(width), 1), float64(width-from)))
		fill := "█"
		if strings.HasPrefix(s.Name, otelnames.OpWait+" ") {
			fill = "░"
		}
		bar := strings.Repeat(" ", from) + strings.Repeat(fill, n) + strings.Repeat(" ", width-from-n)
		label := strings.Repeat("  ", min(nd.Depth, maxIndent)) + termsafe.Escape(s.Name)
		fmt.Fprintf(bw, "%-44s %s %9.2f ms  %s\n", truncate(label, 44), bar, dur/1e6, termsafe.Escape(s.Service))
		if bw.err != nil {
			break
		}
	}
	return bw.err
}

// Node is a span at its depth in its trace's tree, 0 for a root.
type Node struct {
	Span  Span
	Depth int
}

// Tree orders a trace's spans the way every waterfall draws them (the
// terminal's WriteWaterfall and the console's page, which draws the order
// and depths its API sends): depth-first from the roots, the
// roots and each span's children by start, the longer first when they start
// together. A root is a span without a parent, whose parent is not among
// spans (recorded by another process) or is itself; spans caught in a cycle
// of parents follow as roots, each drawn once.
func Tree(in []Span) []Node {
	ids := make(map[string]bool, len(in))
	for _, s := range in {
		ids[s.SpanID] = true
	}
	children := map[string][]int{}
	var roots []int
	for i, s := range in {
		if s.ParentSpanID == "" || !ids[s.ParentSpanID] || s.ParentSpanID == s.SpanID {
			roots = append(roots, i)
		} else {
			children[s.ParentSpanID] = append(children[s.ParentSpanID], i)
		}
	}
	byStart := func(idx []int) {
		sort.SliceStable(idx, func(a, b int) bool {
			x, y := in[idx[a]], in[idx[b]]
			if x.StartTimeUnixNano != y.StartTimeUnixNano {
				return x.StartTimeUnixNano < y.StartTimeUnixNano
			}
			return x.Duration() > y.Duration()
		})
	}
	out := make([]Node, 0, len(in))
	seen := make([]bool, len(in))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if seen[i] {
			return
		}
		seen[i] = true
		out = append(out, Node{in[i], depth})
		kids := children[in[i].SpanID]
		byStart(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	byStart(roots)
	for _, r := range roots {
		walk(r, 0)
	}
	for i := range in {
		walk(i, 0)
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
