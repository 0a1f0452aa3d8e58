package main

import (
	"errors"
	"fmt"
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
	root.AddCommand(e.brokerCommand(), e.produceCommand(), e.gatewayCommand(), e.indexCommand(), e.lagCommand(),
		e.pathwaysCommand(), e.conformanceCommand(), e.loadCommand(), e.traceCommand(), e.consoleCommand(), e.runCommand())
	root.AddCommand(e.workerCommands()...)
	root.AddCommand(e.dlqCommand(), e.versionCommand())
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

// noArgs rejects positional arguments: a command that takes none fails on
// a stray word instead of running without it.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q: %s takes no arguments, only flags (see %s --help)",
			strings.Join(args, " "), cmd.CommandPath(), cmd.CommandPath())
	}
	return nil
}
