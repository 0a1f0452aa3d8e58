// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/tracing"
)

// consoleCommand is "kretrieve console".
func (e *cli) consoleCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "console",
		GroupID: "tools",
		Short:   "Web console: pipeline map, search, traces, dead letters",
		Long: fmt.Sprintf(`Serve the web console until interrupted, on %s by default: the
pipeline map (stages, topics, throughput, pathway latencies, lag, dead
letters), a search box with each request's waterfall, any trace (from the
console's own spans or --jaeger-url), and the dead letters. It is read-only
unless --allow-replay; it connects to Kafka only while a browser asks. run
--serve serves it too, at /console/ on the gateway's address.`, defaultConsoleListen),
		Example: `  kretrieve console
  kretrieve console --brokers kafka:9092 --jaeger-url http://127.0.0.1:16686
  kretrieve console --allow-replay          # then open http://127.0.0.1:8090/`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c consoleConfig) error { return runConsole(ctx, c, e.stderr) }))
}

// defaultConsoleListen is the console's address by default: loopback, as
// the console has no authentication.
const defaultConsoleListen = "127.0.0.1:8090"

// consoleConfig configures the console command.
type consoleConfig struct {
	commonConfig
	listen        string
	jaeger        string
	allowReplay   bool
	pathwaysTopic string
	timeout       time.Duration
	allowedHosts  string
	// unfinishedAfter is console.Config.UnfinishedAfter.
	unfinishedAfter time.Duration
}

// flags declares the flags of a consoleConfig on s and returns the check of
// their values, run once they are parsed.
func (c *consoleConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "console", kafkaclient.DefaultBrokers)
	s.str(&c.listen, "listen", defaultConsoleListen, "HTTP address of the console (loopback by default: it has no authentication)")
	s.str(&c.jaeger, "jaeger-url", "", "Jaeger query API base URL to read traces from, e.g. http://127.0.0.1:16686 (empty: only the console's own spans)")
	s.boolean(&c.allowReplay, "allow-replay", false, "let the console replay dead letters (default: read-only)")
	declarePathwaysTopic(s, &c.pathwaysTopic)
	s.duration(&c.timeout, "timeout", console.DefaultSearchTimeout, "how long a search waits for its result")
	declareConsoleAllowedHosts(s, &c.allowedHosts, "allowed-hosts")
	s.duration(&c.unfinishedAfter, "unfinished-after", status.DefaultUnfinishedAfter, "judge the requests of an origin-time cohort unfinished this long after it ended (at least 3 times the processes' --pathways-interval)")
	return func(args []string) error {
		var errs []error
		if c.unfinishedAfter <= 0 {
			errs = append(errs, errors.New("unfinished-after: must be positive"))
		}
		if _, _, err := net.SplitHostPort(c.listen); err != nil {
			errs = append(errs, fmt.Errorf("listen: %w", err))
		}
		if c.timeout <= 0 {
			errs = append(errs, errors.New("timeout: must be positive"))
		}
		return errors.Join(append(errs, validatePathwaysTopic(c.pathwaysTopic), c.validate(), validateBrokers(c.brokers))...)
	}
}

// declareConsoleAllowedHosts declares the flag of the host names the
// console answers to besides IP addresses and localhost
// (console.Config.AllowedHosts).
func declareConsoleAllowedHosts(s *settings, p *string, name string) {
	s.str(p, name, "", "comma-separated host names the console answers to besides IP addresses and localhost, e.g. console.example.com (other names are refused: DNS rebinding)")
}

// runConsole serves the web console until ctx is done. It connects to
// Kafka only when a browser asks (see package console).
func runConsole(ctx context.Context, cfg consoleConfig, stderr io.Writer) error {
	store := spans.NewStore()
	cmd := command{role: "console", telemetry: []tracing.Option{tracing.WithSpanProcessor(store)}}
	return cmd.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		ln, err := net.Listen("tcp", cfg.listen)
		if err != nil {
			return fmt.Errorf("listen %s: %w", cfg.listen, err)
		}
		opts := []console.Option{console.WithLogger(comp.logger), console.WithSpanStore(store),
			console.WithRequestClient(func(ctx context.Context) (*producer.Client, error) { return p.NewClient(ctx, true) }),
			console.WithUnfinishedGauge(comp.telemetry.MeterProvider)}
		if cfg.allowReplay {
			opts = append(opts, console.WithReplay(func(ctx context.Context, rc dlq.ReplayConfig) (dlq.ReplayResult, error) {
				if err := p.EnsureTopics(ctx); err != nil {
					return dlq.ReplayResult{}, err
				}
				rc.Targets = replayTargets(p)
				return dlq.Replay(ctx, kafkaOptions(p, comp.telemetry.MeterProvider), p.Tracer(rc.Group), rc,
					dlq.WithTracerProvider(comp.telemetry.TracerProvider), dlq.WithLogger(comp.logger))
			}))
		}
		con, err := console.New(console.Config{Topology: p.Topology(), KafkaOptions: kafkaOptions(p, nil), PathwaysTopic: cfg.pathwaysTopic,
			JaegerURL: cfg.jaeger, AllowReplay: cfg.allowReplay, SearchTimeout: cfg.timeout, AllowedHosts: splitList(cfg.allowedHosts),
			UnfinishedAfter: cfg.unfinishedAfter}, opts...)
		if err != nil {
			ln.Close()
			return err
		}
		defer con.Close()
		fmt.Fprintf(stderr, "console: http://%s/ (brokers=%s, replay %s; interrupt to stop)\n", ln.Addr(), cfg.brokers, map[bool]string{true: "allowed", false: "off"}[cfg.allowReplay])
		return serveHTTP(ctx, ln, con)
	})
}

// serveHTTP serves h on ln until ctx is done, with timeouts against slow
// clients (the console's event streams lift the write timeout for
// themselves).
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: console.DefaultSearchTimeout + 15*time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if c, ok := h.(interface{ Close() }); ok {
		c.Close() // ends the event streams
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
