package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kretrieve/kretrieve/conformance"
	"github.com/kretrieve/kretrieve/runsummary"
)

// traceConfig configures the trace command.
type traceConfig struct {
	jaeger    string
	spansFile string
	width     int
	id        string
}

func loadTraceConfig(args []string, getenv func(string) string, out io.Writer) (traceConfig, error) {
	var c traceConfig
	s := newSettings("trace", getenv, out)
	s.str(&c.jaeger, "jaeger-url", "http://127.0.0.1:16686", "Jaeger query API base URL")
	s.str(&c.spansFile, "spans-file", "", "read the trace from this spans file (written by run or load --spans-file) instead of Jaeger; without TRACE_ID, list its traces")
	s.integer(&c.width, "width", 60, "width of the bars")
	if err := s.parse(args); err != nil {
		return c, err
	}
	switch {
	case s.fs.NArg() == 1:
		c.id = strings.ToLower(s.fs.Arg(0))
	case s.fs.NArg() == 0 && c.spansFile != "":
	default:
		return c, errors.New("usage: kretrieve trace [flags] TRACE_ID, or kretrieve trace --spans-file FILE [TRACE_ID]")
	}
	if c.width < 10 {
		return c, errors.New("width: must be at least 10")
	}
	return c, nil
}

// runTrace draws the waterfall of one trace in the terminal, from Jaeger or
// from a spans file.
func runTrace(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadTraceConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.spansFile != "" {
		return traceFromFile(stdout, cfg)
	}
	spans, err := conformance.FetchJaegerTrace(ctx, &http.Client{Timeout: 30 * time.Second}, cfg.jaeger, cfg.id)
	if err != nil {
		return err
	}
	if len(spans) == 0 {
		return fmt.Errorf("trace %s not found in %s", cfg.id, cfg.jaeger)
	}
	return runsummary.WriteWaterfall(stdout, spans, cfg.width)
}

// traceFromFile draws trace cfg.id from cfg.spansFile or, without an id,
// lists the file's traces, slowest first.
func traceFromFile(w io.Writer, cfg traceConfig) error {
	f, err := os.Open(cfg.spansFile)
	if err != nil {
		return err
	}
	defer f.Close()
	spans, err := runsummary.ReadSpans(f)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.spansFile, err)
	}
	traces := runsummary.GroupTraces(spans)
	if cfg.id == "" {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TRACE ID\tDURATION (ms)\tSPANS")
		for _, t := range traces {
			fmt.Fprintf(tw, "%s\t%.2f\t%d\n", t.TraceID, t.DurationMS, len(t.Spans))
		}
		return tw.Flush()
	}
	for _, t := range traces {
		if t.TraceID == cfg.id {
			return runsummary.WriteWaterfall(w, t.Spans, cfg.width)
		}
	}
	return fmt.Errorf("trace %s not in %s (%d traces; list them with kretrieve trace --spans-file %[2]s)", cfg.id, cfg.spansFile, len(traces))
}
