// Command kretrieve runs the parts of the kretrieve pipeline: an embedded
// development broker, the retrieval and enrichment workers, a request
// producer, and an all-in-one run that prints a latency summary.
//
// It is the only place that reads flags and KRETRIEVE_* variables, installs
// the OpenTelemetry globals and handles signals.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "kretrieve:", err)
		os.Exit(1)
	}
}

const usage = `kretrieve: a Kafka retrieval pipeline traced end to end.

Usage:
  kretrieve broker      [flags]            embedded development broker (kfake)
%s  kretrieve produce     [flags] QUERY...   publish requests (--wait for results)
  kretrieve gateway     [flags]            HTTP gateway: POST /v1/search, POST /v1/requests
  kretrieve index       --index DIR [flags] build an on-disk index (Go stdlib docs or --jsonl FILE)
  kretrieve dlq         list|replay [flags] list or replay dead letters
  kretrieve lag         [flags]            consumer-group lag in records and seconds (--watch)
  kretrieve pathways    [flags]            live pathways of every process: msgs/s, edge and origin p50/p95/p99, lag, dead letters
  kretrieve conformance [flags]            check traces in Jaeger against the messaging semconv
  kretrieve load        [flags]            drive a running pipeline (Kafka or --gateway-url): throughput, latency, stages, errors
  kretrieve trace       [flags] TRACE_ID   draw a trace's waterfall from Jaeger or a --spans-file
  kretrieve run         [flags]            all-in-one: broker, workers, requests, summary

Every flag also reads a KRETRIEVE_* variable (see "kretrieve CMD -h");
tracing reads the standard OTEL_* variables.
`

// usageText is usage with a line per stage's worker command.
func usageText() string {
	var b strings.Builder
	for _, st := range (commonConfig{topics: messages.DefaultTopics()}).topology().Stages {
		fmt.Fprintf(&b, "  kretrieve %-11s [flags]            %s worker (group %q)\n", st.Name, st.Name, st.Group)
	}
	return fmt.Sprintf(usage, b.String())
}

// run dispatches to a subcommand.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return errors.New("missing command")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "broker":
		return runBroker(ctx, rest, getenv, stdout, stderr)
	case "produce":
		return runProduce(ctx, rest, getenv, stdout, stderr)
	case "gateway":
		return runGateway(ctx, rest, getenv, stderr)
	case "index":
		return runIndex(ctx, rest, getenv, stdout, stderr)
	case "dlq":
		return runDLQ(ctx, rest, getenv, stdout, stderr)
	case "lag":
		return runLag(ctx, rest, getenv, stdout, stderr)
	case "pathways":
		return runPathways(ctx, rest, getenv, stdout, stderr)
	case "conformance":
		return runConformance(ctx, rest, getenv, stdout, stderr)
	case "load":
		return runLoad(ctx, rest, getenv, stdout, stderr)
	case "trace":
		return runTrace(ctx, rest, getenv, stdout, stderr)
	case "run":
		return runAll(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText())
		return nil
	}
	if slices.Contains(pipelineStages(), cmd) {
		return runWorker(ctx, cmd, rest, getenv, stderr)
	}
	fmt.Fprint(stderr, usageText())
	return fmt.Errorf("unknown command %q", cmd)
}

// component is the logger and telemetry of one running command.
type component struct {
	logger    *slog.Logger
	telemetry *tracing.Providers
	// metrics aggregates the Kafka messaging metrics, exported with the
	// SDK's through telemetry's reader.
	metrics *kafkatrace.Metrics
	// shut is set by the first shutdown.
	shut bool
}

// startComponent builds the logger and the OpenTelemetry providers of a
// command whose default service name is service.
func startComponent(ctx context.Context, service, logFormat, logLevel string, stderr io.Writer, opts ...tracing.Option) (*component, error) {
	logger, err := tracing.NewLogger(stderr, logFormat, logLevel)
	if err != nil {
		return nil, err
	}
	slog.SetDefault(logger)
	// The Kafka metrics follow the exporter preferences of the
	// environment, as the SDK's instruments do (tracing.Setup warns about
	// unknown values).
	prefs, _ := tracing.ReadMetricsPreferences(os.Getenv)
	popts := []tracing.ProducerOption{tracing.WithTemporality(prefs.Temporality)}
	if prefs.ExplicitHistograms {
		popts = append(popts, tracing.WithExplicitPathwayBuckets())
	}
	metrics := kafkatrace.NewMetrics()
	p, err := tracing.Setup(ctx, append([]tracing.Option{
		tracing.WithServiceName(service), tracing.WithLogger(logger), tracing.WithMetricProducer(tracing.NewMetricsProducer(metrics, popts...)),
	}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return &component{logger: logger, telemetry: p, metrics: metrics}, nil
}

// shutdown flushes telemetry on a fresh context bounded by timeout. Only
// the first call does: later ones return nil.
func (c *component) shutdown(timeout time.Duration) error {
	if c.shut {
		return nil
	}
	c.shut = true
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := c.telemetry.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush telemetry: %w", err)
	}
	return nil
}
