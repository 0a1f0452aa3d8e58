package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/messages"
)

// rootLong is the top-level help's description.
const rootLong = `kretrieve: a Kafka retrieval pipeline traced end to end.

Every flag also reads a KRETRIEVE_* variable, named in "kretrieve CMD --help"
(a flag on the command line wins over the variable, which wins over the
default); tracing reads the standard OTEL_* variables. Flags go anywhere on
the command line.`

// newRoot builds the command tree: every command, its flags (each with its
// KRETRIEVE_* variable), its help, and what it runs.
func (e *cli) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "kretrieve",
		Short: "A Kafka retrieval pipeline traced end to end",
		Long:  rootLong,
		Example: `  kretrieve run --requests 200            # everything in one process, then a latency summary
  kretrieve broker &                       # or the parts: a development broker,
  kretrieve retrieval & kretrieve enrichment &
  kretrieve produce --wait "parse a URL"   # and a request, waiting for its result`,
		Args: cobra.ArbitraryArgs,
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

	for _, c := range []struct {
		cmd  *cobra.Command
		bind binding
	}{
		{&cobra.Command{
			Use:     "broker",
			GroupID: "pipeline",
			Short:   "Embedded development broker (kfake)",
			Long: `Serve a Kafka-compatible development broker (kfake) until interrupted, in
memory or persisted with --data-dir; it prints its address on stdout. With
--listen-tls-cert-file it speaks TLS, with SASL users it authenticates, and
with --acls it enforces least-privilege ACLs.`,
			Example: `  kretrieve broker
  kretrieve broker --listen 127.0.0.1:9092 --data-dir /var/lib/kretrieve`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c brokerConfig) error { return runBroker(ctx, c, e.stdout, e.stderr) })},
		{&cobra.Command{
			Use:     "produce [flags] QUERY...",
			GroupID: "pipeline",
			Short:   "Publish requests (--wait for results)",
			Long: `Publish one request per query (the arguments, then --file's lines) and print
each request's id and trace id; with --wait, wait for each result and print it.`,
			Example: `  kretrieve produce "parse a URL" "gzip a file"
  kretrieve produce --wait --json "parse a URL"
  kretrieve produce --file queries.txt`,
			Args: cobra.ArbitraryArgs,
		}, bind(func(ctx context.Context, c produceConfig) error { return runProduce(ctx, c, e.stdout, e.stderr) })},
		{&cobra.Command{
			Use:     "gateway",
			GroupID: "pipeline",
			Short:   "HTTP gateway: POST /v1/search, POST /v1/requests",
			Long: `Serve the HTTP gateway until interrupted: POST /v1/search publishes a request
and answers with its result, POST /v1/requests publishes and answers at
once; /healthz and /readyz report liveness and readiness.`,
			Example: `  kretrieve gateway --http-listen 0.0.0.0:8080
  curl -d '{"query":"parse a URL"}' http://127.0.0.1:8080/v1/search`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c gatewayConfig) error { return runGateway(ctx, c, e.stderr) })},
		{&cobra.Command{
			Use:     "index --index DIR",
			GroupID: "tools",
			Short:   "Build an on-disk index (Go stdlib docs or --jsonl FILE)",
			Long: `Build an on-disk index in --index DIR, which workers open read-only with
--index: the Go standard library docs, or --jsonl FILE's documents.`,
			Example: `  kretrieve index --index ./idx
  kretrieve index --index ./idx --jsonl docs.jsonl --strict`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c indexConfig) error { return runIndex(ctx, c, e.stdout, e.stderr) })},
		{&cobra.Command{
			Use:     "lag",
			GroupID: "tools",
			Short:   "Consumer-group lag in records and seconds (--watch)",
			Long: `Print the lag of consumer groups, per partition, in records and in seconds,
once or every --watch DURATION until interrupted. It exits non-zero when a
lag could not be measured.`,
			Example: `  kretrieve lag
  kretrieve lag --groups retrieval --watch 5s
  kretrieve lag --json`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c lagConfig) error { return runLag(ctx, c, e.stdout, e.stderr) })},
		{&cobra.Command{
			Use:     "pathways",
			GroupID: "tools",
			Short:   "Live pathways of every process: msgs/s, edge and origin p50/p95/p99, lag, dead letters",
			Long: `Print the pathways of the running pipeline from the aggregates every process
publishes: messages per second, edge and origin latency percentiles, lag
and dead letters; on a terminal it refreshes until interrupted.`,
			Example: `  kretrieve pathways
  kretrieve pathways --once --json`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c pathwaysConfig) error { return runPathways(ctx, c, e.stdout, e.stderr) })},
		{&cobra.Command{
			Use:     "conformance",
			GroupID: "tools",
			Short:   "Check traces in Jaeger against the messaging semconv",
			Long: `Fetch traces from Jaeger and check their spans against the OpenTelemetry
messaging semantic conventions; it prints each violation and exits
non-zero when there is one.`,
			Example: `  kretrieve conformance --service kretrieve-retrieval
  kretrieve conformance --trace-id 4bf92f3577b34da6a3ce929d0e0e4736`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c conformanceConfig) error {
			return runConformance(ctx, c, e.stdout, e.stderr)
		})},
		{&cobra.Command{
			Use:     "load",
			GroupID: "tools",
			Short:   "Drive a running pipeline (Kafka or --gateway-url): throughput, latency, stages, errors",
			Long: `Drive a running pipeline through Kafka, or through the HTTP gateway with
--gateway-url, open loop at --rate or closed loop at --in-flight, and report
throughput, end-to-end latency, the per-stage breakdown and errors. It exits
non-zero when more than --max-error-rate of the requests sent fail (failed,
timed out or not delivered).`,
			Example: `  kretrieve load --requests 5000 --in-flight 64
  kretrieve load --rate 500 --duration 1m --gateway-url http://127.0.0.1:8080
  kretrieve load --sweep 100,200,400 --curve curve.svg
  kretrieve load --json --max-error-rate 0.01 > report.json`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c loadConfig) error { return runLoad(ctx, c, e.getenv, e.stdout, e.stderr) })},
		{&cobra.Command{
			Use:     "trace [flags] TRACE_ID",
			GroupID: "tools",
			Short:   "Draw a trace's waterfall from Jaeger or a --spans-file",
			Long: `Draw the waterfall of one trace in the terminal, from Jaeger or from a spans
file written by run or load --spans-file; with a spans file and no TRACE_ID
it lists the file's traces.`,
			Example: `  kretrieve trace 4bf92f3577b34da6a3ce929d0e0e4736
  kretrieve trace --spans-file spans.jsonl`,
			Args: cobra.MaximumNArgs(1),
		}, bind(func(ctx context.Context, c traceConfig) error { return runTrace(ctx, c, e.stdin, e.stdout, e.stderr) })},
		{&cobra.Command{
			Use:     "console",
			GroupID: "tools",
			Short:   "Web console: pipeline map, search, traces, dead letters",
			Long: `Serve the web console until interrupted, on 127.0.0.1:8090 by default: the
pipeline map (stages, topics, throughput, pathway latencies, lag, dead
letters), a search box with each request's waterfall, any trace (from the
console's own spans or --jaeger-url), and the dead letters. It is read-only
unless --allow-replay; it connects to Kafka only while a browser asks. run
--serve serves it too, at /console/ on the gateway's address.`,
			Example: `  kretrieve console
  kretrieve console --brokers kafka:9092 --jaeger-url http://127.0.0.1:16686
  kretrieve console --allow-replay          # then open http://127.0.0.1:8090/`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c consoleConfig) error { return runConsole(ctx, c, e.stderr) })},
		{&cobra.Command{
			Use:     "run",
			GroupID: "pipeline",
			Short:   "All-in-one: broker, workers, requests, summary",
			Long: `Run the whole pipeline in one process: an embedded broker (unless --brokers
is given), the workers, and --requests requests; then print the latency
summary computed from the spans the run recorded, with the slowest
request's waterfall. It exits non-zero when a request did not complete.`,
			Example: `  kretrieve run
  kretrieve run --requests 200 --summary-json - | jq .end_to_end_ms
  kretrieve run --serve              # then keep serving the HTTP gateway`,
			Args: noArgs,
		}, bind(func(ctx context.Context, c runConfig) error { return runAll(ctx, c, e.stdout, e.stderr) })},
	} {
		root.AddCommand(e.command(c.cmd, c.bind))
	}

	for _, st := range (commonConfig{topics: messages.DefaultTopics()}).topology().Stages {
		role := st.Name
		root.AddCommand(e.command(&cobra.Command{
			Use:     role,
			GroupID: "pipeline",
			Short:   fmt.Sprintf("Worker of stage %s (group %q)", role, st.Group),
			Long: fmt.Sprintf(`Run a %s worker until interrupted: it consumes %s in consumer group
%q, processes each record and publishes to the next topic. Records that
fail for good go to the dead-letter topic. Start as many as partitions allow.`, role, st.Input, st.Group),
			Example: fmt.Sprintf(`  kretrieve %s --brokers kafka:9092
  KRETRIEVE_BROKERS=kafka:9092 kretrieve %s --concurrency 12`, role, role),
			Args: noArgs,
		}, func(s *settings) (func([]string) error, func(context.Context) error) {
			var c workerConfig
			return c.flags(s, role), func(ctx context.Context) error { return runWorker(ctx, role, c, e.stderr) }
		}))
	}

	root.AddCommand(e.dlqCommand())

	root.AddCommand(e.versionCommand())
	return root
}

// dlqCommand is "kretrieve dlq" and its list and replay subcommands.
func (e *cli) dlqCommand() *cobra.Command {
	dlq := &cobra.Command{
		Use:     "dlq list|replay",
		GroupID: "tools",
		Short:   "List or replay dead letters",
		Long: `List or replay dead letters. Both read the dead-letter topics up to their
end when the command starts. replay commits its progress to --replay-group:
a dead letter is replayed once per group. Letters that --reason or
--error-type pass over are committed too; preview with --dry-run.`,
		Example: `  kretrieve dlq list
  kretrieve dlq replay --dry-run`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				cmd.SetOut(e.stderr)
				_ = cmd.Help()
				return errors.New("dlq: missing subcommand: list or replay")
			case args[0] == "help":
				return cmd.Help()
			}
			return fmt.Errorf("dlq: unknown subcommand %q (see kretrieve dlq --help)", args[0])
		},
	}
	for _, sub := range []struct{ name, short, example string }{
		{"list", "Print dead letters, oldest first (a table, or --json lines)", `  kretrieve dlq list
  kretrieve dlq list --json --limit 10`},
		{"replay", "Republish dead letters to their original topic, each in a new trace", `  kretrieve dlq replay --dry-run
  kretrieve dlq replay --error-type transient`},
	} {
		dlq.AddCommand(e.command(&cobra.Command{Use: sub.name, Short: sub.short, Example: sub.example, Args: noArgs},
			func(s *settings) (func([]string) error, func(context.Context) error) {
				c := dlqConfig{sub: sub.name}
				return c.flags(s), func(ctx context.Context) error { return runDLQ(ctx, c, e.stdout, e.stderr) }
			}))
	}
	return dlq
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
