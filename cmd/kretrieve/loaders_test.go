// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// load parses args as the command at path of the command tree does (its
// positional-argument rule, C's flags and their variables, and C's check)
// and runs nothing: the loaders below return a command's configuration for
// the tests of its flags.
func load[C any, P interface {
	*C
	flags(*settings) (check func(args []string) error)
}](path []string, args []string, getenv func(string) string) (C, error) {
	var c C
	err := parseConfig(path, args, getenv, func(s *settings) (func([]string) error, func(context.Context) error) {
		return P(&c).flags(s), func(context.Context) error { return nil }
	})
	return c, err
}

// parseConfig parses args with b as the command at path of the tree does,
// and runs b's body.
func parseConfig(path []string, args []string, getenv func(string) string, b binding) error {
	e := &cli{getenv: getenv, stdout: io.Discard, stderr: io.Discard}
	real, _, err := e.newRoot().Find(path)
	if err != nil {
		return err
	}
	cmd := e.command(&cobra.Command{Use: real.Use, Args: real.Args, SilenceErrors: true, SilenceUsage: true}, b)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

func loadWorkerConfig(role string, args []string, getenv func(string) string, _ io.Writer) (c workerConfig, err error) {
	err = parseConfig([]string{role}, args, getenv, func(s *settings) (func([]string) error, func(context.Context) error) {
		return c.flags(s, role), func(context.Context) error { return nil }
	})
	return c, err
}

func loadDLQConfig(sub string, args []string, getenv func(string) string, _ io.Writer) (dlqConfig, error) {
	c := dlqConfig{sub: sub}
	err := parseConfig([]string{"dlq", sub}, args, getenv, func(s *settings) (func([]string) error, func(context.Context) error) {
		return c.flags(s), func(context.Context) error { return nil }
	})
	return c, err
}

// The loaders of the commands whose configuration declares its flags
// with flags(s): each parses as its command does.
var (
	loadBrokerConfig   = loader[brokerConfig]("broker")
	loadProduceConfig  = loader[produceConfig]("produce")
	loadRunConfig      = loader[runConfig]("run")
	loadGatewayConfig  = loader[gatewayConfig]("gateway")
	loadLagConfig      = loader[lagConfig]("lag")
	loadLoadConfig     = loader[loadConfig]("load")
	loadPathwaysConfig = loader[pathwaysConfig]("pathways")
)

// loader returns load for the command name, in the loaders' signature.
func loader[C any, P interface {
	*C
	flags(*settings) (check func(args []string) error)
}](name string) func(args []string, getenv func(string) string, _ io.Writer) (C, error) {
	return func(args []string, getenv func(string) string, _ io.Writer) (C, error) {
		return load[C, P]([]string{name}, args, getenv)
	}
}
