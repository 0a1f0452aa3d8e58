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
	// sweep, curve and curveLabel: see cmd_load_sweep.go.
	sweep      []int
	curve      string
	curveLabel string
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
	var sweep string
	s.str(&sweep, "sweep", "", "rate sweep: open loop at each of these requests per second in turn (e.g. 100,200,400), --requests or --duration each, after a warm-up")
	s.str(&c.curve, "curve", "", "with --sweep: write the latency curve (p50, p99, p99.9 against achieved throughput) to this SVG file")
	s.str(&c.curveLabel, "curve-label", "", "with --sweep: added to the curve's title, e.g. the gateway's sampling (default: this process's OTEL_* sampling)")
	c.spans.declare(s)
	c.pathways.declare(s)
	if err := s.parse(args); err != nil {
		return c, err
	}
	var errs []error
	if sweep != "" {
		rates, err := parseSweep(sweep)
		errs = append(errs, err)
		c.sweep = rates
		if c.rate > 0 {
			errs = append(errs, errors.New("give --rate or --sweep, not both"))
		}
	} else if c.curve != "" {
		errs = append(errs, errors.New("--curve needs --sweep"))
	}
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
	// Sweep holds a rate sweep's steps (--sweep); the totals above are
	// those of every step together, the warm-up left out.
	Sweep []sweepStep `json:"sweep,omitempty"`
	// WarmupRequests is how many requests a sweep sent before its first
	// step, not counted anywhere else.
	WarmupRequests int64 `json:"warmup_requests,omitempty"`
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
// telemetry.RequestOutcome.
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
// spans, peak consumer lag (Kafka) and the slowest request's spans. With
// --sweep it runs open loop at each rate in turn and adds a row per rate
// (see runSweep), and draws their latency curve with --curve.
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
		mu      sync.Mutex
		rep     = loadReport{Mode: fmt.Sprintf("closed loop at %d in flight", cfg.inFlight), Target: "kafka " + cfg.brokers, Stages: map[string]latency{}}
		target  loadTarget
		stopLag = func() {}
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
	if cfg.rate > 0 {
		rep.Mode = fmt.Sprintf("open loop at %d/s", cfg.rate)
	}

	progress := newProgress(stderr)
	d := driver{target: target, queries: strings.Split(strings.TrimSpace(demoQueries), "\n"), inFlight: cfg.inFlight, progress: progress}
	var total *phase
	if len(cfg.sweep) > 0 {
		total = runSweep(ctx, &d, cfg, &rep)
	} else {
		total = d.drive(ctx, cfg.rate, cfg.requests, cfg.duration)
	}
	wall := total.wall
	stopLag()
	err = errors.Join(target.finish(context.WithoutCancel(ctx), &rep), comp.shutdown(10*time.Second))
	total.fill(&rep)
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
		err = errors.Join(err, enc.Encode(rep))
	} else {
		err = errors.Join(err, rep.write(stdout))
	}
	if cfg.curve != "" {
		err = errors.Join(err, writeCurve(cfg, getenv, rep, stderr))
	}
	return err
}

// phase is what became of the requests of one run of the sending loop.
type phase struct {
	mu             sync.Mutex
	sent           int64
	completed      int64
	failed         int64
	timedOut       int64
	transport      int64
	errorsByStatus map[int]int64
	e2e            *hdrhistogram.Histogram
	stages         map[string]*hdrhistogram.Histogram
	wall           time.Duration
}

func newPhase() *phase {
	p := &phase{e2e: newLatencyHistogram(), stages: map[string]*hdrhistogram.Histogram{}}
	for _, st := range stageNames {
		p.stages[st] = newLatencyHistogram()
	}
	return p
}

// newLatencyHistogram records microseconds from 1 µs to an hour.
func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

func (p *phase) record(res loadResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if res.status != 0 && (res.status < 200 || res.status > 299) {
		if p.errorsByStatus == nil {
			p.errorsByStatus = map[int]int64{}
		}
		p.errorsByStatus[res.status]++
	}
	if res.transport {
		p.transport++
	}
	switch res.outcome {
	case outcomeTimeout:
		p.timedOut++
	case outcomeFailed:
		p.failed++
	default:
		p.completed++
		_ = p.e2e.RecordValue(max(res.latency.Microseconds(), 1))
		if t := res.timings; t != nil {
			for st, ms := range map[string]float64{"retrieval_queue": t.RetrievalQueueMS, "retrieval": t.RetrievalMS, "enrichment_queue": t.EnrichmentQueueMS, "enrichment": t.EnrichmentMS} {
				_ = p.stages[st].RecordValue(max(int64(ms*1000), 1))
			}
		}
	}
}

// add adds o's requests and histograms to p, and its wall time.
func (p *phase) add(o *phase) {
	p.sent, p.completed, p.failed, p.timedOut, p.transport = p.sent+o.sent, p.completed+o.completed, p.failed+o.failed, p.timedOut+o.timedOut, p.transport+o.transport
	for code, n := range o.errorsByStatus {
		if p.errorsByStatus == nil {
			p.errorsByStatus = map[int]int64{}
		}
		p.errorsByStatus[code] += n
	}
	p.e2e.Merge(o.e2e)
	for st, h := range o.stages {
		p.stages[st].Merge(h)
	}
	p.wall += o.wall
}

// throughput is the rate of completed requests over the phase's wall time.
func (p *phase) throughput() float64 {
	return float64(p.completed) / max(p.wall.Seconds(), 1e-9)
}

// fill sets the report's counts, throughput and latencies from p.
func (p *phase) fill(rep *loadReport) {
	rep.Sent, rep.Completed, rep.Failed, rep.TimedOut = p.sent, p.completed, p.failed, p.timedOut
	rep.TransportErrors, rep.ErrorsByStatus = p.transport, p.errorsByStatus
	rep.WallSeconds, rep.ThroughputPS = p.wall.Seconds(), p.throughput()
	rep.EndToEndMS = latencyOf(p.e2e)
	for st, h := range p.stages {
		rep.Stages[st] = latencyOf(h)
	}
}

// driver runs load's sending loop against a target.
type driver struct {
	target   loadTarget
	queries  []string
	inFlight int
	progress *progress
	next     int // the index of the next query
}

// drive sends requests until requests have been sent or duration has
// passed (0: no bound), open loop at rate (request i is sent no earlier
// than i/rate after the first; a sender held back by the in-flight bound
// catches up without sleeping) or, at rate 0, closed loop; at most
// d.inFlight await their outcome at once. It returns when every outcome
// is in.
func (d *driver) drive(ctx context.Context, rate, requests int, duration time.Duration) *phase {
	var (
		p        = newPhase()
		finished atomic.Int64
		wg       sync.WaitGroup
		slots    = make(chan struct{}, d.inFlight)
		start    = time.Now()
	)
	for i := 0; ctx.Err() == nil; i++ {
		if requests > 0 && i >= requests || duration > 0 && time.Since(start) >= duration {
			break
		}
		if rate > 0 {
			if wait := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					continue
				}
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		p.sent++
		query := d.queries[d.next%len(d.queries)]
		d.next++
		wg.Go(func() {
			defer func() { <-slots }()
			p.record(d.target.do(ctx, query))
			finished.Add(1)
		})
		d.progress.update(p.sent, finished.Load(), start)
	}
	wg.Wait()
	p.wall = time.Since(start)
	d.progress.done(p.sent, finished.Load(), start)
	return p
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
	if len(r.Sweep) > 0 {
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := writeSweep(w, r.Sweep); err != nil {
			return err
		}
		fmt.Fprintf(tw, "\nall steps (warm-up of %d requests left out)\n", r.WarmupRequests)
	}
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
