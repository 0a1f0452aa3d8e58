package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/tracing"
)

//go:embed queries.txt
var demoQueries string

// runAll runs the whole pipeline in one process: an embedded broker (unless
// --brokers is given), the workers, and --requests requests; it prints the
// summary computed from the spans the run recorded, with the slowest
// request's waterfall, and writes the slowest requests' spans to
// --spans-file.
func runAll(ctx context.Context, cfg runConfig, stdout, stderr io.Writer) (err error) {
	recorder := cfg.spans.recorder()
	topts := append(cfg.telemetryOptions(), tracing.WithSpanProcessor(recorder))
	var store *spans.Store // the console's spans, kept only while a browser asks
	if cfg.serve {
		store = spans.NewStore()
		topts = append(topts, tracing.WithSpanProcessor(store))
	}
	comp, err := startComponent(ctx, "kretrieve-run", cfg.logFormat, cfg.logLevel, stderr, topts...)
	if err != nil {
		return err
	}
	flushed := false
	defer func() {
		if !flushed {
			err = errors.Join(err, comp.shutdown(10*time.Second))
		}
	}()

	// Listen before anything else: a taken port fails the command here,
	// not after the requests with "serving" printed.
	var ln net.Listener
	if cfg.serve {
		if ln, err = listenGateway(cfg.gateway); err != nil {
			return err
		}
		defer ln.Close()
	}

	if cfg.brokers == "" {
		b, err := broker.Start(broker.Config{Listen: cfg.listen, DefaultPartitions: cfg.partitions, Logger: comp.logger})
		if err != nil {
			return err
		}
		defer b.Close()
		cfg.brokers = b.Addr()
		comp.logger.Info("embedded broker listening", "addr", b.Addr())
	}
	pc := cfg.pipelineConfig(comp)
	pc.Worker.Concurrency = cfg.concurrency
	pc.RecordQueryText = cfg.recordQuery
	pc.SearchTimeout = cfg.searchLimit
	p, err := comp.pipeline(pc)
	if err != nil {
		return err
	}
	if err := ensureTopics(ctx, p); err != nil {
		return err
	}
	stopPathways := publishPathways(ctx, cfg.pathways, p, comp)
	defer stopPathways()
	idx, err := openIndex(ctx, cfg.index, comp.logger)
	if err != nil {
		return err
	}
	defer idx.Close()
	workerCtx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	workers, err := p.StartWorkers(workerCtx, idx, cfg.workersPerStage())
	if err != nil {
		return err
	}
	client, err := p.NewClient(ctx, true)
	if err != nil {
		return err
	}

	start := time.Now()
	counts := send(ctx, client, cfg)
	wall := time.Since(start)
	counts.Duplicates = client.Collector.Duplicates()

	if cfg.serve && ctx.Err() == nil {
		var con *console.Console
		con, err = console.New(console.Config{Topology: p.Topology(), KafkaOptions: kafkaOptions(p, nil), PathwaysTopic: cfg.pathways.topic, SearchTimeout: cfg.timeout,
			AllowedHosts: splitList(cfg.hosts)},
			console.WithLogger(comp.logger), console.WithSpanStore(store), console.WithTraces(recorder.Traces),
			console.WithRequestClient(func(ctx context.Context) (*producer.Client, error) { return p.NewClient(ctx, true) }))
		if err == nil {
			fmt.Fprintf(stderr, "serving: brokers=%s gateway=http://%s console=http://%[2]s%s (interrupt to stop)\n", cfg.brokers, ln.Addr(), console.Prefix)
			stopConsole := context.AfterFunc(ctx, con.Close) // ends its event streams, so the gateway drains
			err = serveGatewayOn(ctx, p, cfg.gateway, ln, comp.logger, map[string]http.Handler{"/console/": con, "/console": con})
			stopConsole()
			con.Close()
		}
	}
	stopWorkers()
	err = errors.Join(err, workers.Wait(), client.Close(context.Background()))
	stopPathways() // the last window, with every record of the run
	flushed = true
	if ferr := comp.shutdown(10 * time.Second); ferr != nil {
		err = errors.Join(err, ferr)
	}

	var work []string
	for _, st := range p.Config().Stages {
		work = append(work, st.WorkSpans...)
	}
	summary := recorder.Summary(counts, wall, p.Topology().Topics(), work)
	summary.TracingDisabled = !comp.telemetry.Enabled
	summary.SpansDropped = comp.telemetry.Stats().Dropped
	if werr := summary.WriteText(reportWriter(stdout, stderr, cfg.summaryJSON, cfg.spans.path)); werr != nil {
		err = errors.Join(err, werr)
	}
	if cfg.summaryJSON != "" {
		err = errors.Join(err, writeSummaryJSON(cfg.summaryJSON, summary, stdout))
	}
	if n, werr := cfg.spans.write(recorder, stdout); werr != nil {
		err = errors.Join(err, werr)
	} else if cfg.spans.path != "" {
		fmt.Fprintf(stderr, "spans of the %d slowest completed requests written to %s\n", n, outputName(cfg.spans.path))
	}
	if counts.Completed != counts.Sent {
		err = errors.Join(err, fmt.Errorf("%d of %d requests did not complete", counts.Sent-counts.Completed, counts.Sent))
	}
	return err
}

// send publishes cfg.requests requests, at most cfg.inFlight awaiting their
// result at once, and counts their outcomes.
func send(ctx context.Context, client *producer.Client, cfg runConfig) runsummary.Requests {
	queries := strings.Split(strings.TrimSpace(demoQueries), "\n")
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
