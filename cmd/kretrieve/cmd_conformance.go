// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/ops/conformance"
	"github.com/kretrieve/kretrieve/ops/spans"
)

// conformanceCommand is "kretrieve conformance".
func (e *cli) conformanceCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "conformance",
		GroupID: "tools",
		Short:   "Check traces in Jaeger against the messaging semconv",
		Long: `Fetch traces from Jaeger and check their spans against the OpenTelemetry
messaging semantic conventions; it prints each violation and exits
non-zero when there is one.`,
		Example: fmt.Sprintf(`  kretrieve conformance --service kretrieve-%s
  kretrieve conformance --trace-id 4bf92f3577b34da6a3ce929d0e0e4736`, defaultTopology().Stages[0].Name),
		Args: noArgs,
	}, bind(func(ctx context.Context, c conformanceConfig) error {
		return runConformance(ctx, c, e.stdout, e.stderr)
	}))
}

// defaultJaegerURL is the Jaeger query API that conformance and trace read
// by default: a local Jaeger's.
const defaultJaegerURL = "http://127.0.0.1:16686"

// jaegerClient is the HTTP client conformance and trace read Jaeger with.
func jaegerClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// conformanceConfig configures the conformance command.
type conformanceConfig struct {
	jaeger    string
	service   string
	traceID   string
	limit     int
	allowKey  bool
	noWait    bool
	logFormat string
	logLevel  string
}

// flags declares the flags of a conformanceConfig on s and returns the check of
// their values, run once they are parsed.
func (c *conformanceConfig) flags(s *settings) (check func(args []string) error) {
	s.str(&c.jaeger, "jaeger-url", defaultJaegerURL, "Jaeger query API base URL")
	s.str(&c.service, "service", "", "check the recent traces of this service")
	s.str(&c.traceID, "trace-id", "", "check this trace")
	s.integer(&c.limit, "limit", 20, "traces to fetch with --service")
	s.boolean(&c.allowKey, "allow-raw-key", false, "do not report messaging.kafka.message.key (kretrieve records a hash instead)")
	s.boolean(&c.noWait, "no-queue-wait", false, "do not require kretrieve's wait <topic> span beside process spans")
	declareLogging(s, &c.logFormat, &c.logLevel)
	return func(args []string) error {
		if (c.service == "") == (c.traceID == "") {
			return errors.New("give exactly one of --service and --trace-id")
		}
		return nil
	}
}

// runConformance checks traces in Jaeger against the messaging semantic
// conventions and prints the violations; it fails when there are any.
func runConformance(ctx context.Context, cfg conformanceConfig, stdout, stderr io.Writer) error {
	jaeger := spans.Jaeger{URL: cfg.jaeger, Client: jaegerClient()}
	var (
		got []spans.Span
		err error
	)
	if cfg.traceID != "" {
		got, err = jaeger.Trace(ctx, cfg.traceID)
	} else {
		got, err = jaeger.ServiceTraces(ctx, cfg.service, cfg.limit)
	}
	if err != nil {
		return err
	}
	if len(got) == 0 {
		return errors.New("no spans found")
	}
	opts := conformance.Default()
	opts.ForbidRawKey, opts.RequireQueueWait = !cfg.allowKey, !cfg.noWait
	violations := conformance.Check(got, opts)
	for _, v := range violations {
		fmt.Fprintln(stdout, v)
	}
	traces := map[string]bool{}
	for _, s := range got {
		traces[s.TraceID] = true
	}
	fmt.Fprintf(stdout, "%d spans in %d traces checked, %d violations\n", len(got), len(traces), len(violations))
	if len(violations) > 0 {
		return fmt.Errorf("%d violations of the messaging semantic conventions", len(violations))
	}
	return nil
}
