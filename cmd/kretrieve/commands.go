// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// rootLong is the top-level help's description.
const rootLong = `kretrieve: a Kafka retrieval pipeline traced end to end.

Every flag also reads a KRETRIEVE_* variable, named in "kretrieve CMD --help"
(a flag on the command line wins over the variable, which wins over the
default); tracing reads the standard OTEL_* variables. Flags go anywhere on
the command line.`

// newRoot builds the command tree. Each command's help, flags (each with
// its KRETRIEVE_* variable) and body live in its file, cmd_NAME.go.
func (e *cli) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:     "kretrieve",
		Short:   "A Kafka retrieval pipeline traced end to end",
		Long:    rootLong,
		Example: rootExample(),
		Args:    cobra.ArbitraryArgs,
		// A command line without a command is a mistake, as before cobra.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q (see kretrieve --help)", args[0])
			}
			cmd.SetOut(e.stderr)
			_ = cmd.Help()
			return errors.New("missing command")
		},
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
	})
	root.AddGroup(&cobra.Group{ID: "pipeline", Title: "Pipeline:"}, &cobra.Group{ID: "tools", Title: "Tools:"})
	root.AddCommand(e.brokerCommand(), e.produceCommand(), e.ingestCommand(), e.gatewayCommand(), e.indexCommand(), e.lagCommand(),
		e.pathwaysCommand(), e.conformanceCommand(), e.loadCommand(), e.traceCommand(), e.consoleCommand(), e.runCommand())
	root.AddCommand(e.workerCommands()...)
	root.AddCommand(e.dlqCommand(), e.documentsCommand(), e.versionCommand())
	return root
}

// rootExample is the top-level help's examples: a worker command per
// stage of the binary's pipeline.
func rootExample() string {
	var workers []string
	for _, name := range pipelineStages() {
		workers = append(workers, "kretrieve "+name+" &")
	}
	return `  kretrieve run --requests 200            # everything in one process, then a latency summary
  kretrieve broker &                       # or the parts: a development broker,
  ` + strings.Join(workers, " ") + `
  kretrieve produce --wait "parse a URL"   # and a request, waiting for its result`
}

// cli is what every command reads its variables from and writes to: main's
// environment and standard streams, or a test's.
type cli struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// binding declares a command's flags on s and returns the check to run on
// their values once they are parsed (given the positional arguments), and
// the command's body, which runs with them.
type binding func(s *settings) (check func(args []string) error, body func(ctx context.Context) error)

// bind is the binding of a command whose configuration C declares its
// flags with (*C).flags and that run runs.
func bind[C any, P interface {
	*C
	flags(*settings) (check func(args []string) error)
}](run func(context.Context, C) error) binding {
	return func(s *settings) (func([]string) error, func(context.Context) error) {
		var c C
		return P(&c).flags(s), func(ctx context.Context) error { return run(ctx, c) }
	}
}

// command declares cmd's flags with b and makes cmd run b's body when the
// variables and b's check pass.
func (e *cli) command(cmd *cobra.Command, b binding) *cobra.Command {
	s := newSettings(cmd.Flags(), e.getenv)
	check, body := b(s)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := s.err(); err != nil {
			return err
		}
		if err := check(args); err != nil {
			return err
		}
		return body(cmd.Context())
	}
	return cmd
}

// noArgs rejects positional arguments: a command that takes none fails on
// a stray word instead of running without it.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q: %s takes no arguments, only flags (see %s --help)",
			strings.Join(args, " "), cmd.CommandPath(), cmd.CommandPath())
	}
	return nil
}

// subcommandOnly is the RunE of a command that only groups subcommands
// (want names them): without one it prints its help to stderr and fails;
// "help" prints the help; anything else is an unknown subcommand.
func (e *cli) subcommandOnly(name, want string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			cmd.SetOut(e.stderr)
			_ = cmd.Help()
			return fmt.Errorf("%s: missing subcommand: %s", name, want)
		case args[0] == "help":
			return cmd.Help()
		}
		return fmt.Errorf("%s: unknown subcommand %q (see kretrieve %s --help)", name, args[0], name)
	}
}
