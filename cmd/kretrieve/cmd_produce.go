// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
)

// produceCommand is "kretrieve produce".
func (e *cli) produceCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "produce [flags] QUERY...",
		GroupID: "pipeline",
		Short:   "Publish requests (--wait for results)",
		Long: `Publish one request per query (the arguments, then --file's lines) and print
each request's id and trace id; with --wait, wait for each result and print it.`,
		Example: `  kretrieve produce "parse a URL" "gzip a file"
  kretrieve produce --wait --json "parse a URL"
  kretrieve produce --file queries.txt`,
		Args: cobra.ArbitraryArgs,
	}, bind(func(ctx context.Context, c produceConfig) error { return runProduce(ctx, c, e.stdout, e.stderr) }))
}

// produceConfig configures the produce command.
type produceConfig struct {
	commonConfig
	file    string
	topK    int
	wait    bool
	json    bool
	timeout time.Duration
	queries []string
	// pathways: with --wait, the requests' pathways are published (the
	// last window when produce ends).
	pathways pathwaysFlags
}

// flags declares the flags of a produceConfig on s and returns the check of
// their values, run once they are parsed.
func (c *produceConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "produce", kafkaclient.DefaultBrokers)
	s.str(&c.file, "file", "", "read queries from FILE, one per line (- for stdin)")
	s.integer(&c.topK, "top-k", messages.DefaultTopK, "documents per result")
	s.boolean(&c.wait, "wait", false, "wait for each request's result and print it")
	s.boolean(&c.json, "json", false, "print JSON lines")
	s.duration(&c.timeout, "timeout", 10*time.Second, "how long --wait waits for the results, from when they are sent (the requests carry this deadline)")
	c.pathways.declare(s)
	return func(args []string) error {
		c.queries = args
		var errs []error
		if len(c.queries) == 0 && c.file == "" {
			errs = append(errs, errors.New("give queries as arguments or --file"))
		}
		if c.topK < messages.MinTopK || c.topK > messages.MaxTopK {
			errs = append(errs, fmt.Errorf("top-k: must be between %d and %d", messages.MinTopK, messages.MaxTopK))
		}
		if c.timeout <= 0 {
			errs = append(errs, errors.New("timeout: must be positive"))
		}
		return errors.Join(append(errs, c.validate(), validateBrokers(c.brokers), c.pathways.validate())...)
	}
}

// runProduce publishes one request per query and prints its request and
// trace ids; with --wait it prints each result as it arrives.
func runProduce(ctx context.Context, cfg produceConfig, stdout, stderr io.Writer) (err error) {
	queries, err := readQueries(cfg.queries, cfg.file)
	if err != nil {
		return err
	}
	return command{role: "produce", connect: ensureTopics}.run(ctx, cfg.commonConfig, stderr, func(comp *component, pl *pipeline.Pipeline) (err error) {
		client, err := pl.NewClient(ctx, cfg.wait)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, client.Close(context.WithoutCancel(ctx))) }()
		if cfg.wait {
			// Stopping publishes a last window, once every outcome has been
			// awaited: it holds the end-to-end latency of every request.
			defer publishPathways(ctx, cfg.pathways, pl, comp, nil)()
		}

		calls := make([]*producer.Call, 0, len(queries))
		var errs []error
		// With --wait, every request is awaited for --timeout from now:
		// its record carries that deadline (messages.HeaderDeadline).
		wctx := ctx
		if cfg.wait {
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, cfg.timeout)
			defer cancel()
		}
		for _, q := range queries {
			call, err := client.Start(wctx, messages.Request{Query: q, TopK: cfg.topK}, cfg.wait)
			if err != nil {
				errs = append(errs, fmt.Errorf("query %q: %w", truncate(q, 40), err))
				continue
			}
			calls = append(calls, call)
		}
		p := printer{w: stdout, json: cfg.json}
		for _, call := range calls {
			rcpt, err := call.Acked(ctx)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !cfg.wait {
				p.sent(call, rcpt)
			}
		}
		if cfg.wait {
			for _, call := range calls {
				out, err := call.Wait(wctx, cfg.timeout)
				p.outcome(call, out, err)
				if err != nil || out.Failed {
					errs = append(errs, fmt.Errorf("request %s: not completed", call.Request.RequestID))
				}
			}
		}
		return errors.Join(errs...)
	})
}

// readQueries returns the argument queries followed by the file's non-blank lines.
func readQueries(args []string, file string) ([]string, error) {
	queries := append([]string{}, args...)
	if file == "" {
		return queries, nil
	}
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if q := strings.TrimSpace(sc.Text()); q != "" {
			queries = append(queries, q)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if len(queries) == 0 {
		return nil, errors.New("no queries")
	}
	return queries, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// printer writes produce's output as text or JSON lines.
type printer struct {
	w    io.Writer
	json bool
}

type sentLine struct {
	RequestID string `json:"request_id"`
	TraceID   string `json:"trace_id"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

type outcomeLine struct {
	RequestID string           `json:"request_id"`
	TraceID   string           `json:"trace_id"`
	Outcome   string           `json:"outcome"`
	Reason    string           `json:"reason,omitempty"`
	Result    *messages.Result `json:"result,omitempty"`
}

func (p printer) sent(call *producer.Call, r producer.Receipt) {
	if p.json {
		_ = json.NewEncoder(p.w).Encode(sentLine{r.RequestID, call.TraceID, r.Partition, r.Offset})
		return
	}
	fmt.Fprintf(p.w, "request_id=%s trace_id=%s partition=%d offset=%d\n", r.RequestID, orDash(call.TraceID), r.Partition, r.Offset)
}

func (p printer) outcome(call *producer.Call, out results.Outcome, err error) {
	line := outcomeLine{RequestID: call.Request.RequestID, TraceID: call.TraceID}
	switch {
	case err != nil:
		line.Outcome, line.Reason = "timeout", err.Error()
	case out.Failed:
		line.Outcome, line.Reason = "failed", out.Reason
	default:
		line.Outcome, line.Result = "completed", &out.Result
	}
	if p.json {
		_ = json.NewEncoder(p.w).Encode(line)
		return
	}
	fmt.Fprintf(p.w, "request_id=%s trace_id=%s outcome=%s", line.RequestID, orDash(line.TraceID), line.Outcome)
	if line.Reason != "" {
		fmt.Fprintf(p.w, " reason=%q", line.Reason)
	}
	fmt.Fprintln(p.w)
	if line.Result != nil {
		for i, d := range line.Result.Documents {
			fmt.Fprintf(p.w, "  %2d. %-32s %7.3f  %s\n", i+1, d.Title, d.Score, d.URL)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
