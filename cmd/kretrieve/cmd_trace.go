package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/kretrieve/kretrieve/conformance"
)

// traceConfig configures the trace command.
type traceConfig struct {
	jaeger string
	width  int
	id     string
}

func loadTraceConfig(args []string, getenv func(string) string, out io.Writer) (traceConfig, error) {
	var c traceConfig
	s := newSettings("trace", getenv, out)
	s.str(&c.jaeger, "jaeger-url", "http://127.0.0.1:16686", "Jaeger query API base URL")
	s.integer(&c.width, "width", 60, "width of the bars")
	if err := s.parse(args); err != nil {
		return c, err
	}
	if s.fs.NArg() != 1 {
		return c, errors.New("usage: kretrieve trace [flags] TRACE_ID")
	}
	c.id = s.fs.Arg(0)
	if c.width < 10 {
		return c, errors.New("width: must be at least 10")
	}
	return c, nil
}

// runTrace draws the waterfall of one trace from Jaeger in the terminal.
func runTrace(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadTraceConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	spans, err := conformance.FetchJaegerTrace(ctx, &http.Client{Timeout: 30 * time.Second}, cfg.jaeger, cfg.id)
	if err != nil {
		return err
	}
	if len(spans) == 0 {
		return fmt.Errorf("trace %s not found in %s", cfg.id, cfg.jaeger)
	}
	return waterfall(stdout, spans, cfg.width)
}

// waterfall prints spans as a tree in start order with a bar per span on a
// common time axis; wait spans are drawn with '░' so queueing stands out.
func waterfall(w io.Writer, spans []conformance.Span, width int) error {
	children := map[string][]conformance.Span{}
	ids := map[string]bool{}
	start, end := spans[0].StartMicros, spans[0].EndMicros
	for _, s := range spans {
		ids[s.SpanID] = true
		start, end = min(start, s.StartMicros), max(end, s.EndMicros)
	}
	var roots []conformance.Span
	for _, s := range spans {
		if s.ParentID == "" || !ids[s.ParentID] {
			roots = append(roots, s)
		} else {
			children[s.ParentID] = append(children[s.ParentID], s)
		}
	}
	byStart := func(ss []conformance.Span) {
		sort.Slice(ss, func(i, j int) bool { return ss[i].StartMicros < ss[j].StartMicros })
	}
	total := max(end-start, 1)
	fmt.Fprintf(w, "trace %s  %d spans  %.2f ms\n", spans[0].TraceID, len(spans), float64(total)/1000)
	var walk func(s conformance.Span, depth int)
	walk = func(s conformance.Span, depth int) {
		from := int(float64(s.StartMicros-start) / float64(total) * float64(width))
		n := max(int(float64(s.EndMicros-s.StartMicros)/float64(total)*float64(width)), 1)
		n = min(n, width-from)
		fill := "█"
		if strings.HasPrefix(s.Name, "wait ") {
			fill = "░"
		}
		bar := strings.Repeat(" ", from) + strings.Repeat(fill, max(n, 1)) + strings.Repeat(" ", max(width-from-n, 0))
		label := strings.Repeat("  ", depth) + s.Name
		fmt.Fprintf(w, "%-44s %s %9.2f ms  %s\n", truncate(label, 44), bar, float64(s.EndMicros-s.StartMicros)/1000, s.Service)
		kids := children[s.SpanID]
		byStart(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	byStart(roots)
	for _, r := range roots {
		walk(r, 0)
	}
	return nil
}
