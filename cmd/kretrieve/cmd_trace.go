// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/internal/termsafe"
	"github.com/kretrieve/kretrieve/ops/spans"
)

// traceCommand is "kretrieve trace".
func (e *cli) traceCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "trace [flags] TRACE_ID",
		GroupID: "tools",
		Short:   "Draw a trace's waterfall from Jaeger or a --spans-file",
		Long: `Draw the waterfall of one trace in the terminal, from Jaeger or from a spans
file written by run or load --spans-file; with a spans file and no TRACE_ID
it lists the file's traces.`,
		Example: `  kretrieve trace 4bf92f3577b34da6a3ce929d0e0e4736
  kretrieve trace --spans-file spans.jsonl`,
		Args: cobra.MaximumNArgs(1),
	}, bind(func(ctx context.Context, c traceConfig) error { return runTrace(ctx, c, e.stdin, e.stdout, e.stderr) }))
}

// traceConfig configures the trace command.
type traceConfig struct {
	jaeger    string
	spansFile string
	width     int
	id        string
}

// flags declares the flags of a traceConfig on s and returns the check of
// their values, run once they are parsed.
func (c *traceConfig) flags(s *settings) (check func(args []string) error) {
	s.str(&c.jaeger, "jaeger-url", defaultJaegerURL, "Jaeger query API base URL")
	s.str(&c.spansFile, "spans-file", "", "read the trace from this spans file (written by run or load --spans-file; -: stdin) instead of Jaeger; without TRACE_ID, list its traces")
	s.integer(&c.width, "width", spans.WaterfallWidth, fmt.Sprintf("width of the bars (%d to %d)", spans.MinWaterfallWidth, spans.MaxWaterfallWidth))
	return func(args []string) error {
		switch {
		case len(args) == 1:
			c.id = strings.ToLower(args[0])
		case len(args) == 0 && c.spansFile != "":
		default:
			return errors.New("usage: kretrieve trace [flags] TRACE_ID, or kretrieve trace --spans-file FILE [TRACE_ID]")
		}
		if c.width < spans.MinWaterfallWidth || c.width > spans.MaxWaterfallWidth {
			return fmt.Errorf("width: must be %d to %d", spans.MinWaterfallWidth, spans.MaxWaterfallWidth)
		}
		return nil
	}
}

// runTrace draws the waterfall of one trace in the terminal, from Jaeger or
// from a spans file ("-": stdin).
func runTrace(ctx context.Context, cfg traceConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	if cfg.spansFile != "" {
		return traceFromFile(ctx, stdin, stdout, cfg)
	}
	trace, err := spans.Jaeger{URL: cfg.jaeger, Client: jaegerClient()}.Trace(ctx, cfg.id)
	if err != nil {
		return err
	}
	if len(trace) == 0 {
		return fmt.Errorf("trace %s not found in %s", termsafe.Escape(cfg.id), cfg.jaeger)
	}
	return spans.WriteWaterfall(ctx, stdout, trace, cfg.width)
}

// traceFromFile draws trace cfg.id from cfg.spansFile or, without an id,
// lists the file's traces, slowest first. The file "-" is stdin.
func traceFromFile(ctx context.Context, stdin io.Reader, w io.Writer, cfg traceConfig) error {
	in := stdin
	if cfg.spansFile != "-" {
		f, err := os.Open(cfg.spansFile)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	read, err := spans.ReadSpans(in)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.spansFile, err)
	}
	traces := spans.GroupTraces(read)
	if cfg.id == "" {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TRACE ID\tDURATION (ms)\tSPANS")
		for _, t := range traces {
			if err := ctx.Err(); err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%.2f\t%d\n", termsafe.Escape(t.TraceID), t.DurationMS, len(t.Spans))
		}
		return tw.Flush()
	}
	if trace, _ := spans.Traces(traces).Trace(ctx, cfg.id); len(trace) > 0 {
		return spans.WriteWaterfall(ctx, w, trace, cfg.width)
	}
	return fmt.Errorf("trace %s not in %s (%d traces; list them with kretrieve trace --spans-file %[2]s)", termsafe.Escape(cfg.id), cfg.spansFile, len(traces))
}
