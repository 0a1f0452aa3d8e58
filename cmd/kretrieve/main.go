// Command kretrieve runs the parts of the kretrieve pipeline: an embedded
// development broker, the retrieval and enrichment workers, a request
// producer, and an all-in-one run that prints a latency summary.
//
// It is the only place that reads flags and KRETRIEVE_* variables, installs
// the OpenTelemetry globals and handles signals.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kretrieve:", err)
		os.Exit(1)
	}
}

// run runs the command line args (without the program name) through the
// command tree: tests call it as main does, with their own environment and
// streams.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runIO(ctx, args, getenv, os.Stdin, stdout, stderr)
}

// runIO is run with stdin: what a command reads for an input named "-".
func runIO(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	root := (&cli{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}).newRoot()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
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
