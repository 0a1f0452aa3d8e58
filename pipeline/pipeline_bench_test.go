package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/kretrieve/kretrieve/consumers/enrichment"
	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/internal/kafkatest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
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
// three ways, side by side:
//
//	inprocess         the retrieval worker's search and the enrichment
//	                  worker's steps called directly, request after request
//	                  on GOMAXPROCS goroutines: no Kafka, no messages
//	                  encoded, no tracing
//	kafka-untraced    the whole pipeline on an in-process broker (a client
//	                  with its collector, one retrieval and one enrichment
//	                  worker) with tracing.Setup under OTEL_SDK_DISABLED=true
//	kafka-traced-100  the same with tracing.Setup sampling every request
//	                  (parentbased_always_on), exporting OTLP/HTTP to a
//	                  discarding sink, metrics recorded by a manual reader
//
// Queries cycle through corpus.QualitySet over the real index, the Go
// standard library documentation built in memory (pipeline.OpenIndex). See bench/doc.go for the metrics and invocation.
func BenchmarkPipeline(b *testing.B) {
	b.Run("inprocess", benchmarkInProcess)
	b.Run("kafka-untraced", func(b *testing.B) { benchmarkKafkaPipeline(b, false) })
	b.Run("kafka-traced-100", func(b *testing.B) { benchmarkKafkaPipeline(b, true) })
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
	scored := make([]enrichment.Scored, 0, len(hits))
	for _, h := range hits {
		if d, ok := loaded[h.ID]; ok {
			scored = append(scored, enrichment.Scored{Doc: d.Document, Snippet: d.Snippet, BM25: h.Score})
		}
	}
	scored, _ = enrichment.Dedupe(scored, enrichment.DefaultDuplicateThreshold)
	scored = enrichment.Rerank(req.Query, scored)
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
	telemetry *tracing.Providers
	client    *pipeline.Client
	queries   []string
}

// startKafkaPipeline starts a broker, the topics, one retrieval and one
// enrichment worker and a client with its collector; the telemetry comes
// from tracing.Setup and kafkatrace.NewMetrics, the way the kretrieve command
// builds it.
func startKafkaPipeline(b *testing.B, traced bool) *kafkaPipeline {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), benchTimeout)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := kafkatrace.NewMetrics()
	opts := []tracing.Option{tracing.WithServiceName("kretrieve-bench"), tracing.WithLogger(quiet), tracing.WithMetricProducer(metrics)}
	if traced {
		b.Setenv("OTEL_SDK_DISABLED", "false")
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", newDiscardSink(b).URL)
		b.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
		b.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		b.Setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on")
		b.Setenv("OTEL_METRICS_EXPORTER", "none")
		opts = append(opts, tracing.WithMetricReader(sdkmetric.NewManualReader(sdkmetric.WithProducer(metrics))))
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

	brk := kafkatest.NewBroker(b, benchPartitions)
	cfg := pipeline.Config{
		Kafka:               kafkaclient.Config{Brokers: []string{brk.Addr()}, ClientID: "bench", Partitions: benchPartitions},
		Topics:              messages.DefaultTopics(),
		Logger:              quiet,
		TracerProvider:      tel.TracerProvider,
		MeterProvider:       tel.MeterProvider,
		Propagator:          tel.Propagator,
		Metrics:             metrics,
		ParentBasedSampling: tel.ParentBasedSampling,
	}
	if err := pipeline.EnsureTopics(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	workersCtx, stopWorkers := context.WithCancel(context.Background())
	ws, err := pipeline.StartWorkers(workersCtx, cfg, benchIndex(b), 1, 1)
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
	client, err := pipeline.NewClient(ctx, cfg, true)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close(context.Background()) })
	return &kafkaPipeline{telemetry: tel, client: client, queries: benchQueries(b)}
}

func shutdownTelemetry(tel *tracing.Providers) error {
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	return tel.Shutdown(ctx)
}

// serve publishes requests first..first+n-1 with at most benchWindow in
// flight and waits for every outcome, in publishing order.
func (p *kafkaPipeline) serve(ctx context.Context, first, n int) error {
	ctx, cancel := context.WithTimeout(ctx, benchTimeout)
	defer cancel()
	calls := make(chan *producer.Call, benchWindow)
	waited := make(chan error, 1)
	go func() {
		var err error
		for call := range calls {
			if err != nil {
				continue // drain: the publisher stops at ctx.Done
			}
			var out producer.Outcome
			out, err = call.Wait(ctx, benchTimeout)
			switch {
			case err != nil:
				err = fmt.Errorf("request %s: %w", call.Request.RequestID, err)
			case out.Failed:
				err = fmt.Errorf("request %s dead-lettered on %s: %s", call.Request.RequestID, out.Topic, out.Reason)
			}
			if err != nil {
				cancel()
			}
		}
		waited <- err
	}()
	var pubErr error
	for i := first; i < first+n && pubErr == nil; i++ {
		call, err := p.client.Start(ctx, benchRequest(p.queries, i), true)
		if err != nil {
			pubErr = fmt.Errorf("publish: %w", err)
			break
		}
		select {
		case calls <- call:
		case <-ctx.Done():
			pubErr = ctx.Err()
		}
	}
	close(calls)
	if err := <-waited; err != nil {
		return err
	}
	return pubErr
}

func benchmarkKafkaPipeline(b *testing.B, traced bool) {
	p := startKafkaPipeline(b, traced)
	ctx := b.Context()
	if err := p.serve(ctx, 0, benchWarmup); err != nil {
		b.Fatalf("warm-up: %v", err)
	}
	ended0 := p.telemetry.Stats().Ended

	b.ResetTimer()
	cpu0, start := cpuTime(b), time.Now()
	if err := p.serve(ctx, benchWarmup, b.N); err != nil {
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
	if traced {
		ended := p.telemetry.Stats().Ended - ended0
		if err := shutdownTelemetry(p.telemetry); err != nil {
			b.Fatalf("shut down telemetry: %v", err)
		}
		b.ReportMetric(float64(ended)/float64(b.N), "spans/req")
		b.ReportMetric(float64(p.telemetry.Stats().Dropped), "dropped-spans")
	}
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

// newDiscardSink starts an OTLP/HTTP endpoint that reads and discards every
// request and answers 200 with an empty (zero-byte) export response.
func newDiscardSink(tb testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	tb.Cleanup(srv.Close)
	return srv
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
