package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// parseConfig parses args as the command at path of the command tree does
// (its positional-argument rule, declare's flags and their variables, and
// declare's check) and runs nothing: the loaders below return a command's
// configuration for the tests of its flags.
func parseConfig(path []string, args []string, getenv func(string) string, declare func(*settings) func([]string) error) error {
	e := &cli{getenv: getenv, stdout: io.Discard, stderr: io.Discard}
	real, _, err := e.newRoot().Find(path)
	if err != nil {
		return err
	}
	cmd := e.command(&cobra.Command{Use: real.Use, Args: real.Args, SilenceErrors: true, SilenceUsage: true}, declare,
		func(context.Context) error { return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

func loadWorkerConfig(role string, args []string, getenv func(string) string, _ io.Writer) (workerConfig, error) {
	var c workerConfig
	err := parseConfig([]string{role}, args, getenv, func(s *settings) func([]string) error { return c.flags(s, role) })
	return c, err
}

func loadBrokerConfig(args []string, getenv func(string) string, _ io.Writer) (brokerConfig, error) {
	var c brokerConfig
	err := parseConfig([]string{"broker"}, args, getenv, c.flags)
	return c, err
}

func loadProduceConfig(args []string, getenv func(string) string, _ io.Writer) (produceConfig, error) {
	var c produceConfig
	err := parseConfig([]string{"produce"}, args, getenv, c.flags)
	return c, err
}

func loadRunConfig(args []string, getenv func(string) string, _ io.Writer) (runConfig, error) {
	var c runConfig
	err := parseConfig([]string{"run"}, args, getenv, c.flags)
	return c, err
}

func loadGatewayConfig(args []string, getenv func(string) string, _ io.Writer) (gatewayConfig, error) {
	var c gatewayConfig
	err := parseConfig([]string{"gateway"}, args, getenv, c.flags)
	return c, err
}

func loadIndexConfig(args []string, getenv func(string) string, _ io.Writer) (indexConfig, error) {
	var c indexConfig
	err := parseConfig([]string{"index"}, args, getenv, c.flags)
	return c, err
}

func loadDLQConfig(sub string, args []string, getenv func(string) string, _ io.Writer) (dlqConfig, error) {
	c := dlqConfig{sub: sub}
	err := parseConfig([]string{"dlq", sub}, args, getenv, c.flags)
	return c, err
}

func loadLagConfig(args []string, getenv func(string) string, _ io.Writer) (lagConfig, error) {
	var c lagConfig
	err := parseConfig([]string{"lag"}, args, getenv, c.flags)
	return c, err
}

func loadConformanceConfig(args []string, getenv func(string) string, _ io.Writer) (conformanceConfig, error) {
	var c conformanceConfig
	err := parseConfig([]string{"conformance"}, args, getenv, c.flags)
	return c, err
}

func loadLoadConfig(args []string, getenv func(string) string, _ io.Writer) (loadConfig, error) {
	var c loadConfig
	err := parseConfig([]string{"load"}, args, getenv, c.flags)
	return c, err
}

func loadTraceConfig(args []string, getenv func(string) string, _ io.Writer) (traceConfig, error) {
	var c traceConfig
	err := parseConfig([]string{"trace"}, args, getenv, c.flags)
	return c, err
}

func loadPathwaysConfig(args []string, getenv func(string) string, _ io.Writer) (pathwaysConfig, error) {
	var c pathwaysConfig
	err := parseConfig([]string{"pathways"}, args, getenv, c.flags)
	return c, err
}
