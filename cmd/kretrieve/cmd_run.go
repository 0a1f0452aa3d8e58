// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/tracing"
)

//go:embed queries.txt
var demoQueries string

// demoQueryList is the queries run and load send, in turn: queries.txt's
// lines.
func demoQueryList() []string {
	return strings.Split(strings.TrimSpace(demoQueries), "\n")
}

// runCommand is "kretrieve run".
func (e *cli) runCommand() *cobra.Command {
	return e.command(&cobra.Command{
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
	}, bind(func(ctx context.Context, c runConfig) error { return runAll(ctx, c, e.stdout, e.stderr) }))
}

// runConfig configures the all-in-one run command.
type runConfig struct {
	commonConfig
	listen      string
	requests    int
	inFlight    int
	serve       bool
	hosts       string // --console-allowed-hosts
	summaryJSON string
	timeout     time.Duration
	replicas    map[string]*int // workers per stage: --STAGE-workers
	concurrency int
	gateway     gatewayFlags
	index       string
	recordQuery bool
	recordDocs  bool
	searchLimit time.Duration // --search-timeout
	spans       spansFileFlags
	pathways    pathwaysFlags
}

// flags declares the flags of a runConfig on s and returns the check of
// their values, run once they are parsed.
func (c *runConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "run", "")
	s.str(&c.listen, "listen", "127.0.0.1:0", "embedded broker address when --brokers is empty (port 0: any free port)")
	s.integer(&c.requests, "requests", 1000, "requests to send")
	s.integer(&c.inFlight, "in-flight", 200, "requests awaiting their result at once")
	s.boolean(&c.serve, "serve", false, "keep the broker and workers running after the requests and serve the HTTP gateway, until interrupted")
	declareConsoleAllowedHosts(s, &c.hosts, "console-allowed-hosts")
	c.gateway.declare(s)
	c.declareRetrievalTrustBoundary(s)
	c.declareTrustedBaggage(s)
	c.declareBaggageAttributes(s)
	c.declareMetricsListen(s)
	declareIndex(s, &c.index)
	declareRecordQueryText(s, &c.recordQuery)
	declareRecordDocuments(s, &c.recordDocs)
	declareSearchTimeout(s, &c.searchLimit)
	s.str(&c.summaryJSON, "summary-json", "", "also write the summary as JSON to FILE (-: stdout, and the text summary to stderr)")
	c.spans.declare(s)
	s.duration(&c.timeout, "timeout", 30*time.Second, "how long to wait for each result")
	c.replicas = map[string]*int{}
	for _, name := range pipelineStages() {
		c.replicas[name] = new(int)
		s.integer(c.replicas[name], name+"-workers", 1, name+" workers")
	}
	s.integer(&c.concurrency, "concurrency", consumers.DefaultConcurrency, "partitions each worker processes at once")
	c.pathways.declare(s)
	return func(args []string) error {
		var errs []error
		if c.requests < 0 {
			errs = append(errs, errors.New("requests: must not be negative"))
		}
		errs = append(errs, checkStdout("summary-json", c.summaryJSON, "spans-file", c.spans.path))
		if c.inFlight < 1 || c.concurrency < 1 {
			errs = append(errs, errors.New("in-flight and concurrency: must be at least 1"))
		}
		for _, name := range pipelineStages() {
			if *c.replicas[name] < 1 {
				errs = append(errs, fmt.Errorf("%s-workers: must be at least 1", name))
			}
		}
		if c.brokers == "" && c.secured() {
			errs = append(errs, errors.New("tls-* and sasl-* settings need --brokers: the embedded broker of run speaks plaintext without SASL (start `kretrieve broker` with TLS and SASL users instead)"))
		}
		var errTimeout error
		c.searchLimit, errTimeout = searchTimeout(c.searchLimit)
		errs = append(errs, errTimeout)
		c.gateway.timeout = c.timeout
		if c.serve {
			errs = append(errs, c.gateway.validate())
		} else if c.timeout <= 0 {
			errs = append(errs, errors.New("timeout: must be positive"))
		}
		return errors.Join(append(errs, c.validate(), c.spans.validate(), c.pathways.validate())...)
	}
}

// workersPerStage returns the --STAGE-workers values.
func (c runConfig) workersPerStage() map[string]int {
	out := make(map[string]int, len(c.replicas))
	for name, n := range c.replicas {
		out[name] = *n
	}
	return out
}

// runAll runs the whole pipeline in one process: an embedded broker (unless
// --brokers is given), the workers, and --requests requests; it prints the
// summary computed from the spans the run recorded, with the slowest
// request's waterfall, and writes the slowest requests' spans to
// --spans-file.
func runAll(ctx context.Context, cfg runConfig, stdout, stderr io.Writer) error {
	r := &allInOne{cfg: cfg, recorder: cfg.spans.recorder(), stdout: stdout, stderr: stderr}
	cmd := command{role: "run", telemetry: []tracing.Option{tracing.WithSpanProcessor(r.recorder)}, prepare: r.prepare, connect: ensureTopics}
	if cfg.serve {
		r.store = spans.NewStore() // the console's spans, kept only while a browser asks
		cmd.telemetry = append(cmd.telemetry, tracing.WithSpanProcessor(r.store))
	}
	return cmd.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		return r.run(ctx, comp, p)
	})
}

// allInOne is one run of the run command.
type allInOne struct {
	cfg            runConfig
	recorder       *runsummary.Recorder
	store          *spans.Store // with --serve
	ln             net.Listener // the gateway's, with --serve
	stdout, stderr io.Writer
}

// prepare listens on the gateway's address with --serve, first: a taken
// port fails the command here, not after the requests with "serving"
// printed; then it starts the embedded broker unless --brokers is given,
// and sets the pipeline's worker settings.
func (r *allInOne) prepare(comp *component, pc *pipeline.Config) (release func(), err error) {
	var closers []func() error
	release = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	if r.cfg.serve {
		if r.ln, err = listenGateway(r.cfg.gateway); err != nil {
			return nil, err
		}
		closers = append(closers, r.ln.Close)
	}
	if r.cfg.brokers == "" {
		b, err := broker.Start(broker.Config{Listen: r.cfg.listen, DefaultPartitions: r.cfg.partitions, Logger: comp.logger})
		if err != nil {
			release()
			return nil, err
		}
		closers = append(closers, func() error { b.Close(); return nil })
		r.cfg.brokers = b.Addr()
		pc.Kafka.Brokers = splitList(r.cfg.brokers)
		comp.logger.Info("embedded broker listening", "addr", b.Addr())
	}
	pc.Worker.Concurrency = r.cfg.concurrency
	pc.RecordQueryText = r.cfg.recordQuery
	pc.RecordDocuments = r.cfg.recordDocs
	pc.SearchTimeout = r.cfg.searchLimit
	return release, nil
}

// run publishes the Go documentation to the documents topic when it is
// empty (and no static --index is given), follows the topic into the
// index and runs the pipeline over it (runOn).
func (r *allInOne) run(ctx context.Context, comp *component, p *pipeline.Pipeline) (err error) {
	wi, err := openWorkerIndex(ctx, p, docfeed.DefaultName, r.cfg.index, comp.logger)
	if err != nil {
		return err
	}
	defer wi.Close()
	stopPathways := publishPathways(ctx, r.cfg.pathways, p, comp, wi.feeds)
	defer stopPathways()
	if err := wi.seedDocuments(ctx, p, comp, r.stderr); err != nil {
		return err
	}
	return wi.while(ctx, comp.logger, func(ctx context.Context) error { return r.runOn(ctx, comp, p, wi, stopPathways) })
}

// runOn runs the workers over wi, sends the requests, serves with
// --serve, stops the workers, flushes the telemetry and reports.
func (r *allInOne) runOn(ctx context.Context, comp *component, p *pipeline.Pipeline, wi *workerIndex, stopPathways func()) (err error) {
	workerCtx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	workers, err := p.StartWorkers(workerCtx, wi.idx, r.cfg.workersPerStage())
	if err != nil {
		return err
	}
	client, err := p.NewClient(ctx, true)
	if err != nil {
		return err
	}

	start := time.Now()
	counts := send(ctx, client, r.cfg)
	wall := time.Since(start)
	counts.Duplicates = client.Collector.Duplicates()

	if r.cfg.serve && ctx.Err() == nil {
		err = r.serve(ctx, comp, p)
	}
	stopWorkers()
	err = errors.Join(err, workers.Wait(), client.Close(context.Background()))
	stopPathways() // the last window, with every record of the run
	// Flushed before the summary, which reads the telemetry's final counts.
	err = errors.Join(err, comp.shutdown(defaultFlushTimeout))
	return errors.Join(err, r.report(comp, p, counts, wall))
}

// serve serves the HTTP gateway, with the console at /console/, until ctx
// is done (--serve).
func (r *allInOne) serve(ctx context.Context, comp *component, p *pipeline.Pipeline) error {
	con, err := console.New(console.Config{Topology: p.Topology(), KafkaOptions: kafkaOptions(p, nil), PathwaysTopic: r.cfg.pathways.topic, SearchTimeout: r.cfg.timeout,
		AllowedHosts: splitList(r.cfg.hosts), MaxStreams: consoleStreams(r.cfg.gateway.maxConnections)},
		console.WithLogger(comp.logger), console.WithSpanStore(r.store), console.WithTraces(r.recorder.Traces),
		console.WithRequestClient(func(ctx context.Context) (*producer.Client, error) { return p.NewClient(ctx, true) }))
	if err != nil {
		return err
	}
	fmt.Fprintf(r.stderr, "serving: brokers=%s gateway=http://%s console=http://%[2]s%s (interrupt to stop)\n", r.cfg.brokers, r.ln.Addr(), console.Prefix)
	stopConsole := context.AfterFunc(ctx, con.Close) // ends its event streams, so the gateway drains
	// Console searches do an API request's work: they count in
	// --max-in-flight with /v1/search.
	err = serveGatewayOn(ctx, p, r.cfg.gateway, r.ln, comp.logger, []mount{
		{pattern: "/console/", handler: con}, {pattern: "/console", handler: con},
		{pattern: "POST " + console.Prefix + "api/search", handler: con, admitted: true}})
	stopConsole()
	con.Close()
	return err
}

// consoleStreams is the console's MaxStreams on a gateway with
// maxConnections connections: at most a quarter of them (at least one),
// and at most console.DefaultMaxStreams, so that event streams never hold
// every connection.
func consoleStreams(maxConnections int) int {
	return max(1, min(console.DefaultMaxStreams, maxConnections/4))
}

// report prints the summary computed from the spans the run recorded,
// writes it to --summary-json and the slowest requests' spans to
// --spans-file, and fails when a request did not complete.
func (r *allInOne) report(comp *component, p *pipeline.Pipeline, counts runsummary.Requests, wall time.Duration) error {
	cfg, stdout, stderr := r.cfg, r.stdout, r.stderr
	var work []string
	for _, st := range p.Config().Stages {
		work = append(work, st.WorkSpans...)
	}
	summary := r.recorder.Summary(counts, wall, p.Topology().Topics(), work)
	summary.TracingDisabled = !comp.telemetry.Enabled
	summary.SpansDropped = comp.telemetry.Stats().Dropped
	errs := []error{summary.WriteText(reportWriter(stdout, stderr, cfg.summaryJSON, cfg.spans.path))}
	if cfg.summaryJSON != "" {
		errs = append(errs, writeSummaryJSON(cfg.summaryJSON, summary, stdout))
	}
	errs = append(errs, cfg.spans.save(r.recorder, stdout, stderr))
	if counts.Completed != counts.Sent {
		errs = append(errs, fmt.Errorf("%d of %d requests did not complete", counts.Sent-counts.Completed, counts.Sent))
	}
	return errors.Join(errs...)
}

// send publishes cfg.requests requests, at most cfg.inFlight awaiting their
// result at once, and counts their outcomes.
func send(ctx context.Context, client *producer.Client, cfg runConfig) runsummary.Requests {
	queries := demoQueryList()
	var (
		mu     sync.Mutex
		counts runsummary.Requests
		wg     sync.WaitGroup
		slots  = make(chan struct{}, cfg.inFlight)
	)
	record := func(f func(*runsummary.Requests)) {
		mu.Lock()
		f(&counts)
		mu.Unlock()
	}
	for i := 0; i < cfg.requests && ctx.Err() == nil; i++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		call, err := client.Start(ctx, messages.Request{Query: queries[i%len(queries)]}, true)
		if err != nil {
			<-slots
			record(func(c *runsummary.Requests) { c.Sent++; c.Failed++ })
			continue
		}
		record(func(c *runsummary.Requests) { c.Sent++ })
		wg.Go(func() {
			defer func() { <-slots }()
			out, err := call.Wait(ctx, cfg.timeout)
			record(func(c *runsummary.Requests) {
				switch {
				case errors.Is(err, producer.ErrTimeout):
					c.TimedOut++
				case err != nil || out.Failed:
					c.Failed++
				default:
					c.Completed++
				}
			})
		})
	}
	wg.Wait()
	return counts
}

// writeSummaryJSON writes the summary as JSON to path ("-": stdout).
func writeSummaryJSON(path string, s runsummary.Summary, stdout io.Writer) error {
	f, err := createOutput(path, stdout)
	if err != nil {
		return err
	}
	if err := s.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
