// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/producer"
)

// Report is what `kretrieve load` prints; its JSON keys are documented in docs/performance.md.
type Report struct {
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
	EndToEndMS      Latency            `json:"end_to_end_ms"`
	Stages          map[string]Latency `json:"stages_ms"`
	DroppedSpans    int64              `json:"dropped_spans"`
	PeakLag         int64              `json:"peak_lag_records"`
	PeakLagSecond   float64            `json:"peak_lag_seconds"`
	// Slowest is the slowest completed request with the spans this process
	// recorded of it.
	Slowest         *spans.Trace `json:"slowest,omitempty"`
	UntrackedTraces int64        `json:"untracked_traces"`
	// Sweep holds a rate sweep's steps (--sweep); the totals above are
	// those of every step together, the warm-up left out.
	Sweep []SweepStep `json:"sweep,omitempty"`
	// WarmupRequests is how many requests a sweep sent before its first
	// step, not counted anywhere else.
	WarmupRequests int64 `json:"warmup_requests,omitempty"`
}

// Failures counts the requests sent that did not complete: failed (gateway
// transport errors and non-2xx answers among them) or timed out.
func (r Report) Failures() int64 { return r.Failed + r.TimedOut }

// FailureRate is Failures over Sent, 0 when nothing was sent.
func (r Report) FailureRate() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(r.Failures()) / float64(r.Sent)
}

// Latency is a latency distribution's quantiles and maximum, in
// milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(95)), ms(h.ValueAtQuantile(99)), ms(h.ValueAtQuantile(99.9)), ms(h.Max())}
}

// queueKey is the Report.Stages key of a stage's queue wait.
func queueKey(stage string) string { return stage + "_queue" }

// StageKeys returns the keys of Report.Stages for the named stages (in
// pipeline order, topology.Topology.Names): "<stage>_queue", the stage's
// queue wait, then "<stage>", its work, for each. A report has the keys
// of the stages its results' timings name.
func StageKeys(stages []string) []string {
	keys := make([]string, 0, 2*len(stages))
	for _, st := range stages {
		keys = append(keys, queueKey(st), st)
	}
	return keys
}

// Outcomes of a load request: the values of the root span's
// producer.OutcomeAttr.
const (
	outcomeCompleted = "completed"
	outcomeFailed    = "failed"
	outcomeTimeout   = "timeout"
)

// result is the outcome of one load request.
type result struct {
	outcome string // outcomeCompleted, outcomeFailed or outcomeTimeout
	latency time.Duration
	timings *messages.Timings // the result's per-stage timings, when completed
	status  int               // the gateway's HTTP status; 0 for Kafka or without an answer
	// transport is set when the gateway gave no HTTP answer.
	transport bool
}

// Target is what a run drives: the pipeline through Kafka
// (NewKafkaTarget) or the HTTP gateway (NewGatewayTarget).
type Target interface {
	// name is the report's Target: "kafka BROKERS" or "gateway URL".
	name() string
	// start begins what the target watches during the run.
	start(ctx context.Context)
	// do sends one request and waits for its outcome.
	do(ctx context.Context, query string) result
	// finish adds what only the target knows to rep and releases it.
	finish(ctx context.Context, rep *Report) error
}

// KafkaConfig configures a Kafka target.
type KafkaConfig struct {
	// Brokers names the target in the report ("kafka " + Brokers).
	Brokers string
	// Timeout is how long to wait for each result.
	Timeout time.Duration
	// LagOptions are the franz-go options of the client that measures the
	// worker groups' lag every second during the run, for the report's
	// peak lag. Nil: no lag is measured.
	LagOptions []kgo.Opt
	// LagGroups are the consumer groups whose lag is measured: the
	// stages' groups (topology.Topology.Groups).
	LagGroups []string
}

// NewKafkaTarget returns a target publishing requests and collecting their
// results with client, which the run closes.
func NewKafkaTarget(client *producer.Client, c KafkaConfig) Target {
	return &kafkaTarget{client: client, cfg: c, stopLag: func() {}}
}

// kafkaTarget publishes requests and collects their results through Kafka.
type kafkaTarget struct {
	client  *producer.Client
	cfg     KafkaConfig
	stopLag func()

	mu            sync.Mutex
	peakLag       int64
	peakLagSecond float64
}

func (k *kafkaTarget) name() string { return "kafka " + k.cfg.Brokers }

func (k *kafkaTarget) start(ctx context.Context) {
	if k.cfg.LagOptions == nil || len(k.cfg.LagGroups) == 0 {
		return
	}
	k.stopLag = watchPeakLag(ctx, k.cfg.LagOptions, k.cfg.LagGroups, func(records int64, seconds float64) {
		k.mu.Lock()
		k.peakLag, k.peakLagSecond = max(k.peakLag, records), max(k.peakLagSecond, seconds)
		k.mu.Unlock()
	})
}

func (k *kafkaTarget) do(ctx context.Context, query string) result {
	start := time.Now()
	call, err := k.client.Start(ctx, messages.Request{Query: query}, true)
	if err != nil {
		return result{outcome: outcomeFailed}
	}
	out, err := call.Wait(ctx, k.cfg.Timeout)
	res := result{latency: time.Since(start)}
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

func (k *kafkaTarget) finish(ctx context.Context, rep *Report) error {
	k.stopLag()
	k.mu.Lock()
	rep.PeakLag, rep.PeakLagSecond = k.peakLag, k.peakLagSecond
	k.mu.Unlock()
	rep.Duplicates = k.client.Collector.Duplicates()
	return k.client.Close(ctx)
}

// Config configures a run.
type Config struct {
	// Rate is the open loop's requests per second; 0 runs closed loop at
	// InFlight.
	Rate int
	// InFlight bounds the requests awaiting their outcome at once: the
	// closed loop's concurrency, the most an open loop allows before
	// sending waits.
	InFlight int
	// Requests and Duration bound the sending (0: no bound; give at least
	// one); each step of a sweep has both bounds.
	Requests int
	Duration time.Duration
	// Sweep, when not empty, runs open loop at each of these rates in turn
	// after a warm-up at the first (see Run); Rate is then unused.
	Sweep []int
	// Queries are sent in turn, from the first, again and again.
	Queries []string
	// Progress receives the sent and completed counts while the run goes:
	// redrawn in place on a terminal, a line every few seconds otherwise.
	// Nil: io.Discard.
	Progress io.Writer
}

// Run drives target with cfg's requests, open loop at cfg.Rate or closed
// loop at cfg.InFlight, or a sweep of rates (cfg.Sweep), until every
// outcome is in, then releases the target. The report holds the mode, the
// target, the counts, throughput, end-to-end and per-stage latencies and
// what only the target knows (duplicates and peak lag in Kafka mode);
// the telemetry fields (DroppedSpans, Slowest, UntrackedTraces) are the
// caller's to fill. The error is the target's release error; the report is
// complete either way.
func Run(ctx context.Context, cfg Config, target Target) (Report, error) {
	rep := Report{Mode: fmt.Sprintf("closed loop at %d in flight", cfg.InFlight), Target: target.name(), Stages: map[string]Latency{}}
	target.start(ctx)
	if cfg.Rate > 0 {
		rep.Mode = fmt.Sprintf("open loop at %d/s", cfg.Rate)
	}
	w := cfg.Progress
	if w == nil {
		w = io.Discard
	}
	d := driver{target: target, queries: cfg.Queries, inFlight: cfg.InFlight, progress: newProgress(w)}
	var total *phase
	if len(cfg.Sweep) > 0 {
		total = runSweep(ctx, &d, cfg, &rep)
	} else {
		total = d.drive(ctx, cfg.Rate, cfg.Requests, cfg.Duration)
	}
	err := target.finish(context.WithoutCancel(ctx), &rep)
	total.fill(&rep)
	return rep, err
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
	return &phase{e2e: newLatencyHistogram(), stages: map[string]*hdrhistogram.Histogram{}}
}

// stage returns the histogram for the Report.Stages key name, adding one
// for a stage not seen before.
func (p *phase) stage(name string) *hdrhistogram.Histogram {
	h, ok := p.stages[name]
	if !ok {
		h = newLatencyHistogram()
		p.stages[name] = h
	}
	return h
}

// newLatencyHistogram records microseconds from 1 µs to an hour.
func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

// counts returns the phase's counts so far for the progress line: sent,
// completed, and failures (failed or timed out). Only the sending
// goroutine calls it (it alone writes sent).
func (p *phase) counts() progressCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return progressCounts{sent: p.sent, completed: p.completed, failures: p.failed + p.timedOut}
}

func (p *phase) record(res result) {
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
			for _, st := range t.Stages {
				_ = p.stage(queueKey(st.Stage)).RecordValue(max(int64(st.QueueMS*1000), 1))
				_ = p.stage(st.Stage).RecordValue(max(int64(st.WorkMS*1000), 1))
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
		p.stage(st).Merge(h)
	}
	p.wall += o.wall
}

// throughput is the rate of completed requests over the phase's wall time.
func (p *phase) throughput() float64 {
	return float64(p.completed) / max(p.wall.Seconds(), 1e-9)
}

// fill sets the report's counts, throughput and latencies from p.
func (p *phase) fill(rep *Report) {
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
	target   Target
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
		p     = newPhase()
		wg    sync.WaitGroup
		slots = make(chan struct{}, d.inFlight)
		start = time.Now()
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
		})
		d.progress.update(p.counts(), start)
	}
	wg.Wait()
	p.wall = time.Since(start)
	d.progress.done(p.counts(), start)
	return p
}

// watchPeakLag measures the groups' lag every second and reports each
// measurement to peak, until the returned stop is called.
func watchPeakLag(ctx context.Context, opts []kgo.Opt, groups []string, peak func(records int64, seconds float64)) (stop func()) {
	lagCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if ls, err := lag.Measure(lagCtx, opts, groups...); err == nil {
				// One rule for a total (lag.Sum): unknown (-1) when a
				// partition's lag is, which the peak's max ignores.
				ls = slices.DeleteFunc(ls, func(l lag.PartitionLag) bool { return l.Partition < 0 })
				records, oldest, _ := lag.Sum(ls)
				peak(records, oldest)
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

// progress shows sent, completed and failed counts: redrawn in place on a
// terminal, a plain line every few seconds otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	last  time.Time
	every time.Duration
}

// progressCounts are the counts a progress line shows: a failure (failed
// or timed out) is not completed.
type progressCounts struct {
	sent, completed, failures int64
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

func (p *progress) update(c progressCounts, start time.Time) {
	if time.Since(p.last) < p.every {
		return
	}
	p.last = time.Now()
	p.print(c, start)
}

func (p *progress) print(c progressCounts, start time.Time) {
	rate := float64(c.completed+c.failures) / max(time.Since(start).Seconds(), 1e-9)
	if p.tty {
		fmt.Fprintf(p.w, "\rsent %d  completed %d  failed %d  %.0f req/s   ", c.sent, c.completed, c.failures, rate)
	} else {
		fmt.Fprintf(p.w, "sent %d completed %d failed %d rate %.0f/s\n", c.sent, c.completed, c.failures, rate)
	}
}

func (p *progress) done(c progressCounts, start time.Time) {
	p.print(c, start)
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
