// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/consumers/enrichment"
	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/rerank"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/tracing"
)

const (
	// benchPartitions is the partition count of every pipeline topic.
	benchPartitions = 6
	// benchWarmup requests go through a Kafka pipeline before the
	// measurement: they wait for the group joins and open the connections.
	benchWarmup = 60
	// benchWindow bounds the requests in flight (published, outcome not yet
	// taken) so that memory does not grow with b.N.
	benchWindow = 1024
	// benchTimeout bounds setup, one measured run and the flush each.
	benchTimeout = 2 * time.Minute
)

// BenchmarkPipeline serves b.N retrieval requests (search, then enrichment)
// several ways, side by side:
//
//	inprocess         the retrieval worker's search and the enrichment
//	                  worker's steps called directly, request after request
//	                  on GOMAXPROCS goroutines: no Kafka, no messages
//	                  encoded, no tracing
//	kafka-untraced    the whole pipeline on an in-process broker (a client
//	                  with its collector, one retrieval and one enrichment
//	                  worker) with tracing.Setup under OTEL_SDK_DISABLED=true;
//	                  pathways on, as kretrieve runs by default
//	kafka-traced-100  the same with tracing.Setup sampling every request
//	                  (parentbased_always_on), exporting OTLP/HTTP to a
//	                  discarding sink, metrics recorded by a manual reader
//	kafka-traced-1    the same sampling 1% of requests
//	                  (parentbased_traceidratio, 0.01)
//	kafka-traced-1-nopathways
//	                  kafka-traced-1 with pathways off
//	                  (pipeline.Config.DisablePathways)
//
// Queries cycle through corpus.QualitySet over the real index, the Go
// standard library documentation built in memory (pipeline.OpenIndex). See bench/doc.go for the metrics and invocation.
func BenchmarkPipeline(b *testing.B) {
	b.Run("inprocess", benchmarkInProcess)
	for _, v := range kafkaVariants {
		b.Run(v.name, func(b *testing.B) { benchmarkKafkaPipeline(b, v, 0) })
	}
}

// PacedRate is the rate, in requests per second, at which
// BenchmarkPipelinePaced publishes: well below the saturated throughput of
// the traced pipeline on a 2-core machine (see BENCHMARKS.md), so that the
// latencies measured are those of requests going through the pipeline,
// not of requests queueing behind a saturated stage.
const PacedRate = 250

// pacedVariants are the kafkaVariants BenchmarkPipelinePaced runs: the
// same sampling with pathways on and off.
var pacedVariants = []string{"kafka-traced-1", "kafka-traced-1-nopathways"}

// BenchmarkPipelinePaced publishes b.N requests (after the same warm-up as
// BenchmarkPipeline) at PacedRate, request i no earlier than i/PacedRate
// after the first, and reports the percentiles of the requests' latencies,
// from producer.Client.Start until the outcome was taken: what pathways add
// to each request's latency. See bench/doc.go for the metrics and
// invocation.
func BenchmarkPipelinePaced(b *testing.B) {
	for _, name := range pacedVariants {
		i := slices.IndexFunc(kafkaVariants, func(v kafkaVariant) bool { return v.name == name })
		if i < 0 {
			b.Fatalf("no Kafka variant %q", name)
		}
		b.Run(name, func(b *testing.B) { benchmarkKafkaPipeline(b, kafkaVariants[i], PacedRate) })
	}
}

// kafkaVariant is a Kafka sub-benchmark of BenchmarkPipeline.
type kafkaVariant struct {
	name string
	// sampler and samplerArg are OTEL_TRACES_SAMPLER and
	// OTEL_TRACES_SAMPLER_ARG; an empty sampler runs with
	// OTEL_SDK_DISABLED=true.
	sampler, samplerArg string
	// noPathways sets pipeline.Config.DisablePathways.
	noPathways bool
}

func (v kafkaVariant) traced() bool { return v.sampler != "" }

var kafkaVariants = []kafkaVariant{
	{name: "kafka-untraced"},
	{name: "kafka-traced-100", sampler: "parentbased_always_on"},
	{name: "kafka-traced-1", sampler: "parentbased_traceidratio", samplerArg: "0.01"},
	{name: "kafka-traced-1-nopathways", sampler: "parentbased_traceidratio", samplerArg: "0.01", noPathways: true},
}

// benchRequest is the i-th request of a run.
func benchRequest(queries []string, i int) messages.Request {
	return messages.Request{Query: queries[i%len(queries)]}
}

func benchQueries(tb testing.TB) []string {
	tb.Helper()
	qs, err := corpus.QualitySet()
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Query
	}
	return out
}

// benchIndex returns the real index: the Go standard library documentation
// (about 8,350 documents) in memory, as `kretrieve run` serves it. It is
// built once per process (a few seconds) and shared, read-only, by every
// sub-benchmark.
func benchIndex(tb testing.TB) *search.Index {
	tb.Helper()
	stdlibIndex.once.Do(func() {
		stdlibIndex.idx, stdlibIndex.err = pipeline.OpenIndex(context.Background(), "")
	})
	if stdlibIndex.err != nil {
		tb.Fatal(stdlibIndex.err)
	}
	return stdlibIndex.idx
}

var stdlibIndex struct {
	once sync.Once
	idx  *search.Index
	err  error
}

// inProcess serves a request the way a single process without messaging
// would: the retrieval worker's search, then the enrichment worker's steps
// (load documents with snippets, dedupe, rerank) called directly. Nothing
// is encoded or decoded, nothing is traced. The enrichment steps mirror the
// unexported enrich of consumers/enrichment, from its exported parts.
type inProcess struct {
	idx *search.Index
}

func (p inProcess) serve(ctx context.Context, req messages.Request) ([]messages.Document, error) {
	req = req.WithDefaults()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	hits, err := p.idx.Search(ctx, req.Query, req.TopK)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	loaded, err := p.idx.Highlight(ctx, req.Query, ids, enrichment.DefaultSnippetRunes)
	if err != nil {
		return nil, fmt.Errorf("load documents: %w", err)
	}
	scored := make([]rerank.Scored, 0, len(hits))
	for _, h := range hits {
		if d, ok := loaded[h.ID]; ok {
			scored = append(scored, rerank.Scored{Doc: d.Document, Snippet: d.Snippet, BM25: h.Score})
		}
	}
	scored, _ = rerank.Dedupe(scored, rerank.DefaultDuplicateThreshold)
	scored = rerank.Rerank(req.Query, scored)
	docs := make([]messages.Document, len(scored))
	for i, s := range scored {
		docs[i] = messages.Document{
			ID: s.Doc.ID, Title: s.Doc.Title, Score: s.Score, Snippet: s.Snippet, URL: s.Doc.URL,
			Source: s.Doc.Source, Kind: s.Doc.Kind, ImportPath: s.Doc.ImportPath, Metadata: s.Doc.Metadata,
		}
	}
	return docs, nil
}

func benchmarkInProcess(b *testing.B) {
	queries := benchQueries(b)
	p := inProcess{idx: benchIndex(b)}
	ctx := b.Context()
	for i := range len(queries) { // warm-up: every query once
		if _, err := p.serve(ctx, benchRequest(queries, i)); err != nil {
			b.Fatal(err)
		}
	}

	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0, start := cpuTime(b), time.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N || failed.Load() != nil {
					return
				}
				// The requests the Kafka variants measure: after their warm-up.
				if _, err := p.serve(ctx, benchRequest(queries, benchWarmup+i)); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	reportThroughput(b, elapsed, cpu)
}

// kafkaPipeline is a running pipeline on its own in-process broker.
type kafkaPipeline struct {
	pipeline  *pipeline.Pipeline
	telemetry *tracing.Providers
	client    *producer.Client
	queries   []string
}

// startKafkaPipeline starts a broker, the topics, one retrieval and one
// enrichment worker and a client with its collector; the telemetry comes
// from tracing.Setup and kafkatrace.NewMetrics, the way the kretrieve command
// builds it.
func startKafkaPipeline(b *testing.B, v kafkaVariant) *kafkaPipeline {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), benchTimeout)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := kafkatrace.NewMetrics()
	opts := []tracing.Option{tracing.WithServiceName("kretrieve-bench"), tracing.WithLogger(quiet), tracing.WithMetricProducer(tracing.NewMetricsProducer(metrics))}
	traced := v.traced()
	if traced {
		b.Setenv("OTEL_SDK_DISABLED", "false")
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlptest.NewDiscardSink(b).URL)
		b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
		b.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		b.Setenv("OTEL_TRACES_SAMPLER", v.sampler)
		b.Setenv("OTEL_TRACES_SAMPLER_ARG", v.samplerArg)
		b.Setenv("OTEL_METRICS_EXPORTER", "none")
		opts = append(opts, tracing.WithMetricReader(sdkmetric.NewManualReader(sdkmetric.WithProducer(tracing.NewMetricsProducer(metrics)))))
	} else {
		b.Setenv("OTEL_SDK_DISABLED", "true")
	}
	tel, err := tracing.Setup(ctx, opts...)
	if err != nil {
		b.Fatal(err)
	}
	if tel.Exporting != traced || tel.Enabled != traced {
		b.Fatalf("tracing.Setup: enabled %v, exporting %v; want %v", tel.Enabled, tel.Exporting, traced)
	}
	b.Cleanup(func() { _ = shutdownTelemetry(tel) })

	brk := brokertest.NewBroker(b, benchPartitions)
	cfg := pipeline.Config{
		Kafka:               kafkaclient.Config{Brokers: []string{brk.Addr()}, ClientID: "bench", Partitions: benchPartitions},
		ParentBasedSampling: tel.ParentBasedSampling,
		ServiceName:         tel.ServiceName,
		DisablePathways:     v.noPathways,
	}
	pl := mustNew(b, cfg, pipeline.WithLogger(quiet), pipeline.WithTracerProvider(tel.TracerProvider),
		pipeline.WithMeterProvider(tel.MeterProvider), pipeline.WithPropagator(tel.Propagator), pipeline.WithMetrics(metrics))
	if err := pl.EnsureTopics(ctx); err != nil {
		b.Fatal(err)
	}
	workersCtx, stopWorkers := context.WithCancel(context.Background())
	ws, err := pl.StartWorkers(workersCtx, benchIndex(b), nil)
	if err != nil {
		stopWorkers()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stopWorkers()
		if err := ws.Wait(); err != nil {
			b.Errorf("workers: %v", err)
		}
	})
	client, err := pl.NewClient(ctx, true)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close(context.Background()) })
	return &kafkaPipeline{pipeline: pl, telemetry: tel, client: client, queries: benchQueries(b)}
}

func shutdownTelemetry(tel *tracing.Providers) error {
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	return tel.Shutdown(ctx)
}

// serve publishes requests first..first+n-1 with at most benchWindow in
// flight, waits for every outcome and returns each request's latency, from
// Start until its outcome was taken (producer.Call.Duration). Each call is
// awaited on its own goroutine, so that a request's latency never includes
// waiting behind an earlier one whose outcome comes later, and its slot in
// the window frees as soon as its outcome is in. With rate > 0, request
// first+i is published no earlier than i/rate after the first (see
// BenchmarkPipelinePaced); otherwise as fast as the window allows.
func (p *kafkaPipeline) serve(ctx context.Context, first, n, rate int) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, benchTimeout)
	defer cancel()
	var failed atomic.Pointer[error]
	fail := func(err error) {
		if failed.CompareAndSwap(nil, &err) {
			cancel()
		}
	}
	latencies := make([]time.Duration, n)
	slots := make(chan struct{}, benchWindow)
	var wg sync.WaitGroup
	start := time.Now()
publish:
	for i := range n {
		if rate > 0 {
			// A late publisher does not sleep until it has caught up:
			// the schedule does not drift.
			if wait := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); wait > 0 {
				time.Sleep(wait)
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			fail(ctx.Err())
			break publish
		}
		call, err := p.client.Start(ctx, benchRequest(p.queries, first+i), true)
		if err != nil {
			fail(fmt.Errorf("publish: %w", err))
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			out, err := call.Wait(ctx, benchTimeout)
			switch {
			case err != nil:
				fail(fmt.Errorf("request %s: %w", call.Request.RequestID, err))
			case out.Failed:
				fail(fmt.Errorf("request %s dead-lettered on %s: %s", call.Request.RequestID, out.Topic, out.Reason))
			default:
				latencies[i] = call.Duration()
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return nil, *err
	}
	return latencies, nil
}

// benchmarkKafkaPipeline serves b.N requests through the pipeline of v,
// as fast as the window allows or, with rate > 0, paced at rate.
func benchmarkKafkaPipeline(b *testing.B, v kafkaVariant, rate int) {
	p := startKafkaPipeline(b, v)
	ctx := b.Context()
	if _, err := p.serve(ctx, 0, benchWarmup, 0); err != nil {
		b.Fatalf("warm-up: %v", err)
	}
	ended0 := p.telemetry.Stats().Ended

	b.ResetTimer()
	cpu0, start := cpuTime(b), time.Now()
	latencies, err := p.serve(ctx, benchWarmup, b.N, rate)
	if err != nil {
		b.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, benchTimeout)
	defer cancel()
	if err := p.telemetry.ForceFlush(fctx); err != nil {
		b.Fatalf("flush telemetry: %v", err)
	}
	elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
	b.StopTimer()

	reportThroughput(b, elapsed, cpu)
	reportLatency(b, latencies)
	if v.traced() {
		ended := p.telemetry.Stats().Ended - ended0
		if err := shutdownTelemetry(p.telemetry); err != nil {
			b.Fatalf("shut down telemetry: %v", err)
		}
		b.ReportMetric(float64(ended)/float64(b.N), "spans/req")
		b.ReportMetric(float64(p.telemetry.Stats().Dropped), "dropped-spans")
	}
}

// reportLatency reports the median and 99th percentile of the requests'
// latencies, in microseconds, and returns them.
func reportLatency(b *testing.B, latencies []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(latencies)
	p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
	if p50 > 0 {
		b.ReportMetric(float64(p99)/float64(p50), "p99/p50")
	}
	return p50, p99
}

// percentile returns the q-quantile (0 < q ≤ 1) of sorted by the
// nearest-rank method: the smallest value at least q of the values do not
// exceed; 0 for no values.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func reportThroughput(b *testing.B, elapsed, cpu time.Duration) {
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/req")
}

// cpuTime returns the user+system CPU time of the whole process: the
// broker, every client and worker, the SDK and the sink.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestInProcessServesWhatThePipelineServes checks that BenchmarkPipeline's
// in-process baseline does the pipeline's work: the same documents, in the
// same order, with the same snippets.
func TestInProcessServesWhatThePipelineServes(t *testing.T) {
	h := newHarness(t, 3)
	h.startWorkers()
	c := h.client(true)
	queries := benchQueries(t)[:12]
	outs := sendAndWait(t, c, queries)
	p := inProcess{idx: h.idx}
	for i, out := range outs {
		want := out.Result.Documents
		// sendAndWait asks for 5 documents.
		got, err := p.serve(t.Context(), messages.Request{Query: queries[i], TopK: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("query %q: %d documents in process, %d through the pipeline", queries[i], len(got), len(want))
		}
		for j := range got {
			if got[j].ID != want[j].ID || got[j].Snippet != want[j].Snippet || got[j].Score != want[j].Score {
				t.Errorf("query %q, document %d: in process %s %.4f %q, pipeline %s %.4f %q",
					queries[i], j, got[j].ID, got[j].Score, got[j].Snippet, want[j].ID, want[j].Score, want[j].Snippet)
			}
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tt := range []struct {
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{nil, 0.99, 0},
		{ms(7), 0.5, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{ms(hundred...), 0.99, 99 * time.Millisecond},
		{ms(hundred...), 0.5, 50 * time.Millisecond},
		{ms(hundred...), 1, 100 * time.Millisecond},
		{ms(hundred[:99]...), 0.99, 99 * time.Millisecond},
	} {
		if got := percentile(tt.sorted, tt.q); got != tt.want {
			t.Errorf("percentile of %d values, %v = %v, want %v", len(tt.sorted), tt.q, got, tt.want)
		}
	}
}
