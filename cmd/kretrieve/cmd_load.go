package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
)

// loadConfig configures the load command.
type loadConfig struct {
	commonConfig
	rate     int
	inFlight int
	requests int
	duration time.Duration
	timeout  time.Duration
	json     bool
}

func loadLoadConfig(args []string, getenv func(string) string, out io.Writer) (loadConfig, error) {
	var c loadConfig
	s := newSettings("load", getenv, out)
	c.declare(s, "load", kafkaclient.DefaultBrokers)
	s.integer(&c.rate, "rate", 0, "open loop: requests per second (0: closed loop at --in-flight)")
	s.integer(&c.inFlight, "in-flight", 64, "closed loop: requests awaiting their result at once; open loop: the most allowed before sending waits")
	s.integer(&c.requests, "requests", 10000, "requests to send (0: until --duration)")
	s.duration(&c.duration, "duration", 0, "stop sending after this long (0: until --requests)")
	s.duration(&c.timeout, "timeout", 30*time.Second, "how long to wait for each result")
	s.boolean(&c.json, "json", false, "print the report as JSON")
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
	return c, errors.Join(append(errs, c.validate(), validateBrokers(c.brokers))...)
}

// loadReport is what `kretrieve load` prints; its JSON keys are documented in README.md.
type loadReport struct {
	Mode          string             `json:"mode"`
	Sent          int64              `json:"sent"`
	Completed     int64              `json:"completed"`
	Failed        int64              `json:"failed"`
	TimedOut      int64              `json:"timed_out"`
	Duplicates    int64              `json:"duplicates"`
	WallSeconds   float64            `json:"wall_seconds"`
	ThroughputPS  float64            `json:"throughput_per_second"`
	EndToEndMS    latency            `json:"end_to_end_ms"`
	Stages        map[string]latency `json:"stages_ms"`
	DroppedSpans  int64              `json:"dropped_spans"`
	PeakLag       int64              `json:"peak_lag_records"`
	PeakLagSecond float64            `json:"peak_lag_seconds"`
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

// runLoad drives a running pipeline through Kafka, open loop at --rate or
// closed loop at --in-flight, and reports throughput, end-to-end latency
// (HDR histograms), the per-stage breakdown from the results' timings
// (queue wait vs work on each hop), dropped spans and peak consumer lag.
func runLoad(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	cfg, err := loadLoadConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	comp, pc, err := cfg.start(ctx, "load", stderr)
	if err != nil {
		return err
	}
	if err := pipeline.EnsureTopics(ctx, pc); err != nil {
		return errors.Join(err, comp.shutdown(10*time.Second))
	}
	client, err := pipeline.NewClient(ctx, pc, true)
	if err != nil {
		return errors.Join(err, comp.shutdown(10*time.Second))
	}

	var (
		mu       sync.Mutex
		e2e      = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
		stages   = map[string]*hdrhistogram.Histogram{}
		rep      = loadReport{Mode: "closed loop", Stages: map[string]latency{}}
		sent     atomic.Int64
		finished atomic.Int64
		wg       sync.WaitGroup
		slots    = make(chan struct{}, cfg.inFlight)
	)
	for _, st := range stageNames {
		stages[st] = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	}
	if cfg.rate > 0 {
		rep.Mode = fmt.Sprintf("open loop at %d/s", cfg.rate)
	}
	record := func(out producer.Outcome, err error, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, producer.ErrTimeout):
			rep.TimedOut++
		case err != nil || out.Failed:
			rep.Failed++
		default:
			rep.Completed++
			_ = e2e.RecordValue(max(d.Microseconds(), 1))
			t := out.Result.Timings
			for st, ms := range map[string]float64{"retrieval_queue": t.RetrievalQueueMS, "retrieval": t.RetrievalMS, "enrichment_queue": t.EnrichmentQueueMS, "enrichment": t.EnrichmentMS} {
				_ = stages[st].RecordValue(max(int64(ms*1000), 1))
			}
		}
	}

	// Peak lag of the worker groups, measured every second while loading.
	lagCtx, stopLag := context.WithCancel(ctx)
	lagDone := make(chan struct{})
	go func() {
		defer close(lagDone)
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
				mu.Lock()
				rep.PeakLag, rep.PeakLagSecond = max(rep.PeakLag, total), max(rep.PeakLagSecond, oldest)
				mu.Unlock()
			}
			select {
			case <-lagCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()

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
		callStart := time.Now()
		call, err := client.Start(ctx, messages.Request{Query: queries[i%len(queries)]}, true)
		if err != nil {
			<-slots
			record(producer.Outcome{}, err, 0)
			continue
		}
		sent.Add(1)
		wg.Go(func() {
			defer func() { <-slots }()
			out, err := call.Wait(ctx, cfg.timeout)
			record(out, err, time.Since(callStart))
			finished.Add(1)
		})
		progress.update(sent.Load(), finished.Load(), start)
	}
	wg.Wait()
	wall := time.Since(start)
	progress.done(sent.Load(), finished.Load(), start)
	stopLag()
	<-lagDone
	rep.Duplicates = client.Collector.Duplicates()
	err = errors.Join(client.Close(context.WithoutCancel(ctx)), comp.shutdown(10*time.Second))
	rep.Sent, rep.WallSeconds = sent.Load(), wall.Seconds()
	rep.ThroughputPS = float64(rep.Completed) / wall.Seconds()
	rep.EndToEndMS = latencyOf(e2e)
	for st, h := range stages {
		rep.Stages[st] = latencyOf(h)
	}
	rep.DroppedSpans = comp.telemetry.Stats().Dropped
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return errors.Join(err, enc.Encode(rep))
	}
	return errors.Join(err, rep.write(stdout))
}

func (r loadReport) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "mode\t%s\n", r.Mode)
	fmt.Fprintf(tw, "requests\tsent %d\tcompleted %d\tfailed %d\ttimed out %d\tduplicates %d\n", r.Sent, r.Completed, r.Failed, r.TimedOut, r.Duplicates)
	fmt.Fprintf(tw, "throughput\t%.1f req/s\tover %.2f s\t\t\t\n", r.ThroughputPS, r.WallSeconds)
	fmt.Fprintf(tw, "dropped spans\t%d\t\t\t\t\n", r.DroppedSpans)
	fmt.Fprintf(tw, "peak lag\t%d records\t%.1f s\t\t\t\n\n", r.PeakLag, r.PeakLagSecond)
	fmt.Fprintln(tw, "latency (ms)\tp50\tp95\tp99\tp99.9\tmax")
	row := func(name string, l latency) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", name, l.P50, l.P95, l.P99, l.P999, l.Max)
	}
	row("end-to-end", r.EndToEndMS)
	for _, st := range stageNames {
		row("  "+strings.ReplaceAll(st, "_", " "), r.Stages[st])
	}
	return tw.Flush()
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
