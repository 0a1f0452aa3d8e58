package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/runsummary"
	"github.com/kretrieve/kretrieve/tracing"
)

// loadConfig configures the load command.
type loadConfig struct {
	commonConfig
	rate       int
	inFlight   int
	requests   int
	duration   time.Duration
	timeout    time.Duration
	json       bool
	gatewayURL string
	spans      spansFileFlags
	// pathways: in Kafka mode, the requests' pathways are published (in
	// gateway mode the gateway publishes them).
	pathways pathwaysFlags
}

func loadLoadConfig(args []string, getenv func(string) string, out io.Writer) (loadConfig, error) {
	var c loadConfig
	s := newSettings("load", getenv, out)
	c.declare(s, "load", kafkaclient.DefaultBrokers)
	s.str(&c.gatewayURL, "gateway-url", "", "drive the HTTP gateway at this base URL (POST /v1/search, e.g. http://127.0.0.1:8080) instead of Kafka")
	s.integer(&c.rate, "rate", 0, "open loop: requests per second (0: closed loop at --in-flight)")
	s.integer(&c.inFlight, "in-flight", 64, "closed loop: requests awaiting their result at once; open loop: the most allowed before sending waits")
	s.integer(&c.requests, "requests", 10000, "requests to send (0: until --duration)")
	s.duration(&c.duration, "duration", 0, "stop sending after this long (0: until --requests)")
	s.duration(&c.timeout, "timeout", 30*time.Second, "how long to wait for each result (gateway mode: for each HTTP response)")
	s.boolean(&c.json, "json", false, "print the report as JSON")
	c.spans.declare(s)
	c.pathways.declare(s)
	if err := s.parse(args); err != nil {
		return c, err
	}
	var errs []error
	if c.requests <= 0 && c.duration <= 0 {
		errs = append(errs, errors.New("give --requests or --duration"))
	}
	if c.rate < 0 || c.inFlight < 1 || c.timeout <= 0 {
		errs = append(errs, errors.New("rate must not be negative; in-flight and timeout must be positive"))
	}
	if c.gatewayURL != "" {
		if u, err := url.Parse(c.gatewayURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("gateway-url: %q is not an http(s) URL", c.gatewayURL))
		}
	}
	return c, errors.Join(append(errs, c.validate(), validateBrokers(c.brokers), c.spans.validate(), c.pathways.validate())...)
}

// loadReport is what `kretrieve load` prints; its JSON keys are documented in README.md.
type loadReport struct {
	Mode   string `json:"mode"`
	Target string `json:"target"`
	// Sent counts requests started, Completed those answered with a result.
	Sent      int64 `json:"sent"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	TimedOut  int64 `json:"timed_out"`
	// ErrorsByStatus counts the non-2xx answers of the gateway by status.
	ErrorsByStatus map[int]int64 `json:"errors_by_status,omitempty"`
	// TransportErrors counts gateway requests without an HTTP answer.
	TransportErrors int64              `json:"transport_errors,omitempty"`
	Duplicates      int64              `json:"duplicates"`
	WallSeconds     float64            `json:"wall_seconds"`
	ThroughputPS    float64            `json:"throughput_per_second"`
	EndToEndMS      latency            `json:"end_to_end_ms"`
	Stages          map[string]latency `json:"stages_ms"`
	DroppedSpans    int64              `json:"dropped_spans"`
	PeakLag         int64              `json:"peak_lag_records"`
	PeakLagSecond   float64            `json:"peak_lag_seconds"`
	// Slowest is the slowest completed request with the spans this process
	// recorded of it.
	Slowest         *runsummary.Trace `json:"slowest,omitempty"`
	UntrackedTraces int64             `json:"untracked_traces"`
}

type latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func latencyOf(h *hdrhistogram.Histogram) latency {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return latency{ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(95)), ms(h.ValueAtQuantile(99)), ms(h.ValueAtQuantile(99.9)), ms(h.Max())}
}

// stageNames are the per-stage timings every result carries.
var stageNames = []string{"retrieval_queue", "retrieval", "enrichment_queue", "enrichment"}

// Outcomes of a load request: the values of the root span's
// producer.OutcomeAttr.
const (
	outcomeCompleted = "completed"
	outcomeFailed    = "failed"
	outcomeTimeout   = "timeout"
)

// loadResult is the outcome of one load request.
type loadResult struct {
	outcome string // outcomeCompleted, outcomeFailed or outcomeTimeout
	latency time.Duration
	timings *messages.Timings // the result's per-stage timings, when completed
	status  int               // the gateway's HTTP status; 0 for Kafka or without an answer
	// transport is set when the gateway gave no HTTP answer.
	transport bool
}

// loadTarget is what load drives: the pipeline through Kafka or the gateway.
type loadTarget interface {
	// do sends one request and waits for its outcome.
	do(ctx context.Context, query string) loadResult
	// finish adds what only the target knows to rep and releases it.
	finish(ctx context.Context, rep *loadReport) error
}

// kafkaTarget publishes requests and collects their results through Kafka.
type kafkaTarget struct {
	client  *pipeline.Client
	timeout time.Duration
}

func (k *kafkaTarget) do(ctx context.Context, query string) loadResult {
	start := time.Now()
	call, err := k.client.Start(ctx, messages.Request{Query: query}, true)
	if err != nil {
		return loadResult{outcome: outcomeFailed}
	}
	out, err := call.Wait(ctx, k.timeout)
	res := loadResult{latency: time.Since(start)}
	if d := call.Duration(); d > 0 {
		// The root span's own duration: the slowest request's trace then
		// lasts exactly the latency reported for it.
		res.latency = d
	}
	switch {
	case errors.Is(err, producer.ErrTimeout):
		res.outcome = outcomeTimeout
	case err != nil || out.Failed:
		res.outcome = outcomeFailed
	default:
		res.outcome, res.timings = outcomeCompleted, &out.Result.Timings
	}
	return res
}

func (k *kafkaTarget) finish(ctx context.Context, rep *loadReport) error {
	rep.Duplicates = k.client.Collector.Duplicates()
	return k.client.Close(ctx)
}

// runLoad drives a running pipeline, through Kafka or through the HTTP
// gateway (--gateway-url), open loop at --rate or closed loop at
// --in-flight, and reports throughput, end-to-end latency (HDR
// histograms), the per-stage breakdown from the results' timings (queue
// wait vs work on each hop), errors by HTTP status (gateway), dropped
// spans, peak consumer lag (Kafka) and the slowest request's spans.
func runLoad(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	cfg, err := loadLoadConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	recorder := cfg.spans.recorder()
	comp, pc, err := cfg.start(ctx, "load", stderr, tracing.WithSpanProcessor(recorder))
	if err != nil {
		return err
	}

	var (
		mu       sync.Mutex
		e2e      = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
		stages   = map[string]*hdrhistogram.Histogram{}
		rep      = loadReport{Mode: fmt.Sprintf("closed loop at %d in flight", cfg.inFlight), Target: "kafka " + cfg.brokers, Stages: map[string]latency{}}
		sent     atomic.Int64
		finished atomic.Int64
		wg       sync.WaitGroup
		slots    = make(chan struct{}, cfg.inFlight)
		target   loadTarget
		stopLag  = func() {}
	)
	if cfg.gatewayURL != "" {
		rep.Target = "gateway " + cfg.gatewayURL
		target = newGatewayTarget(cfg.gatewayURL, cfg.inFlight, cfg.timeout, comp.telemetry)
	} else {
		if err := ensureTopics(ctx, pc); err != nil {
			return errors.Join(err, comp.shutdown(10*time.Second))
		}
		client, err := pipeline.NewClient(ctx, pc, true)
		if err != nil {
			return errors.Join(err, comp.shutdown(10*time.Second))
		}
		target = &kafkaTarget{client: client, timeout: cfg.timeout}
		defer publishPathways(ctx, cfg.pathways, pc, comp)()
		stopLag = watchPeakLag(ctx, pc, comp, func(records int64, seconds float64) {
			mu.Lock()
			rep.PeakLag, rep.PeakLagSecond = max(rep.PeakLag, records), max(rep.PeakLagSecond, seconds)
			mu.Unlock()
		})
	}
	for _, st := range stageNames {
		stages[st] = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	}
	if cfg.rate > 0 {
		rep.Mode = fmt.Sprintf("open loop at %d/s", cfg.rate)
	}
	record := func(res loadResult) {
		mu.Lock()
		defer mu.Unlock()
		if res.status != 0 && (res.status < 200 || res.status > 299) {
			if rep.ErrorsByStatus == nil {
				rep.ErrorsByStatus = map[int]int64{}
			}
			rep.ErrorsByStatus[res.status]++
		}
		if res.transport {
			rep.TransportErrors++
		}
		switch res.outcome {
		case outcomeTimeout:
			rep.TimedOut++
		case outcomeFailed:
			rep.Failed++
		default:
			rep.Completed++
			_ = e2e.RecordValue(max(res.latency.Microseconds(), 1))
			if t := res.timings; t != nil {
				for st, ms := range map[string]float64{"retrieval_queue": t.RetrievalQueueMS, "retrieval": t.RetrievalMS, "enrichment_queue": t.EnrichmentQueueMS, "enrichment": t.EnrichmentMS} {
					_ = stages[st].RecordValue(max(int64(ms*1000), 1))
				}
			}
		}
	}

	progress := newProgress(stderr)
	queries := strings.Split(strings.TrimSpace(demoQueries), "\n")
	start := time.Now()
	var pace *time.Ticker
	if cfg.rate > 0 {
		pace = time.NewTicker(time.Second / time.Duration(cfg.rate))
		defer pace.Stop()
	}
	for i := 0; ctx.Err() == nil; i++ {
		if cfg.requests > 0 && i >= cfg.requests || cfg.duration > 0 && time.Since(start) >= cfg.duration {
			break
		}
		if pace != nil {
			select {
			case <-pace.C:
			case <-ctx.Done():
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		sent.Add(1)
		query := queries[i%len(queries)]
		wg.Go(func() {
			defer func() { <-slots }()
			record(target.do(ctx, query))
			finished.Add(1)
		})
		progress.update(sent.Load(), finished.Load(), start)
	}
	wg.Wait()
	wall := time.Since(start)
	progress.done(sent.Load(), finished.Load(), start)
	stopLag()
	err = errors.Join(target.finish(context.WithoutCancel(ctx), &rep), comp.shutdown(10*time.Second))
	rep.Sent, rep.WallSeconds = sent.Load(), wall.Seconds()
	rep.ThroughputPS = float64(rep.Completed) / wall.Seconds()
	rep.EndToEndMS = latencyOf(e2e)
	for st, h := range stages {
		rep.Stages[st] = latencyOf(h)
	}
	rep.DroppedSpans = comp.telemetry.Stats().Dropped
	spans := recorder.Summary(runsummary.Requests{}, wall, nil, nil)
	rep.Slowest, rep.UntrackedTraces = spans.Slowest, spans.UntrackedTraces
	if n, werr := cfg.spans.write(recorder); werr != nil {
		err = errors.Join(err, werr)
	} else if cfg.spans.path != "" {
		fmt.Fprintf(stderr, "spans of the %d slowest completed requests written to %s\n", n, cfg.spans.path)
	}
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return errors.Join(err, enc.Encode(rep))
	}
	return errors.Join(err, rep.write(stdout))
}

// watchPeakLag measures the worker groups' lag every second and reports
// each measurement to peak, until the returned stop is called.
func watchPeakLag(ctx context.Context, pc pipeline.Config, comp *component, peak func(records int64, seconds float64)) (stop func()) {
	lagCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if ls, err := lag.Measure(lagCtx, kafkaclient.Options(pc.Kafka, comp.logger, nil), pipeline.RetrievalGroup, pipeline.EnrichmentGroup); err == nil {
				var total int64
				var oldest float64
				for _, l := range ls {
					total += max(l.Records, 0)
					oldest = max(oldest, l.Seconds)
				}
				peak(total, oldest)
			}
			select {
			case <-lagCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

func (r loadReport) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "mode\t%s\n", r.Mode)
	fmt.Fprintf(tw, "target\t%s\n", r.Target)
	fmt.Fprintf(tw, "requests\tsent %d\tcompleted %d\tfailed %d\ttimed out %d\tduplicates %d\n", r.Sent, r.Completed, r.Failed, r.TimedOut, r.Duplicates)
	if len(r.ErrorsByStatus) > 0 || r.TransportErrors > 0 {
		codes := slices.Sorted(maps.Keys(r.ErrorsByStatus))
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%d: %d", c, r.ErrorsByStatus[c]))
		}
		if r.TransportErrors > 0 {
			parts = append(parts, fmt.Sprintf("no answer: %d", r.TransportErrors))
		}
		fmt.Fprintf(tw, "http errors\t%s\n", strings.Join(parts, "  "))
	}
	fmt.Fprintf(tw, "throughput\t%.1f req/s\tover %.2f s\n", r.ThroughputPS, r.WallSeconds)
	fmt.Fprintf(tw, "dropped spans\t%d\n", r.DroppedSpans)
	if strings.HasPrefix(r.Target, "kafka") {
		fmt.Fprintf(tw, "peak lag\t%d records\t%.1f s\n", r.PeakLag, r.PeakLagSecond)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "latency (ms)\tp50\tp95\tp99\tp99.9\tmax")
	row := func(name string, l latency) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", name, l.P50, l.P95, l.P99, l.P999, l.Max)
	}
	row("end-to-end", r.EndToEndMS)
	for _, st := range stageNames {
		row("  "+strings.ReplaceAll(st, "_", " "), r.Stages[st])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := runsummary.WriteSlowest(w, r.Slowest, r.UntrackedTraces, runsummary.WaterfallWidth); err != nil || r.Slowest == nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(spans of this process only; the pipeline's spans: kretrieve trace --jaeger-url URL %s)\n", r.Slowest.TraceID)
	return err
}

// progress shows sent/completed counts: redrawn in place on a terminal,
// a plain line every few seconds otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	last  time.Time
	every time.Duration
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, every: 5 * time.Second}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, 200*time.Millisecond
		}
	}
	return p
}

func (p *progress) update(sent, done int64, start time.Time) {
	if time.Since(p.last) < p.every {
		return
	}
	p.last = time.Now()
	p.print(sent, done, start)
}

func (p *progress) print(sent, done int64, start time.Time) {
	rate := float64(done) / max(time.Since(start).Seconds(), 1e-9)
	if p.tty {
		fmt.Fprintf(p.w, "\rsent %d  completed %d  %.0f req/s   ", sent, done, rate)
	} else {
		fmt.Fprintf(p.w, "sent %d completed %d rate %.0f/s\n", sent, done, rate)
	}
}

func (p *progress) done(sent, done int64, start time.Time) {
	p.print(sent, done, start)
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
