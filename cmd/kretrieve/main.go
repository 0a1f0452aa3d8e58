// SPDX-License-Identifier: Apache-2.0

// Command kretrieve runs the parts of the kretrieve pipeline: an embedded
// development broker, a worker per pipeline stage, a request producer, the
// HTTP gateway, an all-in-one run that prints a latency summary, and the
// operator's tools (lag, pathways, dead letters, load, traces, console).
//
// It is the only place that reads flags and KRETRIEVE_* variables and
// handles signals. Each command that talks to Kafka sets up its logger (also
// the slog default) and its telemetry with tracing.Setup, which reads the
// OTEL_* variables and installs the providers and propagator as the
// OpenTelemetry globals; the command hands the same providers to the
// pipeline explicitly (see command.go).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
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
