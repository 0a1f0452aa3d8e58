// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/pipeline"
)

// BenchmarkIdleLatency serves b.N requests one at a time, each sent when
// the previous one's answer is in, so that nothing ever queues: the
// latency of an idle pipeline, side by side with the same work called in
// process.
//
//	inprocess  the search and enrichment work of BenchmarkPipeline's
//	           inprocess, called directly
//	kafka      a producer.Client publishes the request and awaits its
//	           result over the in-process broker: three Kafka hops
//	           (requests, candidates, results) through one retrieval and
//	           one enrichment worker, untraced (OTEL_SDK_DISABLED=true),
//	           pathways on, the producers' default linger (0)
//	gateway    POST /v1/search to the HTTP gateway (Pipeline.NewGateway on
//	           an httptest server, over one kept-alive connection) in
//	           front of the same pipeline
//
// Each variant first serves benchWarmup requests (every query at least
// once in process; the group joins and connections for the others), then
// measures b.N, each from just before it is sent until its answer has been
// read, and reports p50-µs and p99-µs. kafka and gateway also serve, in the
// same run, one request in process beside each of theirs (the same query,
// in process first for even requests and second for odd ones, so that
// neither side always finds the caches the other warmed), and report that
// in-process path's percentiles (inproc-p50-µs, inproc-p99-µs) and what the
// Kafka path adds to the work's own tail: p99-over-inproc-ms, its p99 minus
// the in-process p99, in ms. kafka reports hop-p50-µs, the difference of
// the two p50s divided by the three hops: what one Kafka hop adds to a
// request (bench/benchratio prints both against their targets). The two
// paths measured side by side see the same load on a shared machine (their
// ns/op is the mean of both latencies together). See bench/doc.go for the
// invocation.
func BenchmarkIdleLatency(b *testing.B) {
	b.Run("inprocess", func(b *testing.B) {
		work, warmup := inProcessIdle(b)
		benchmarkIdle(b, max(benchWarmup, warmup), work, false, 0)
	})
	b.Run("kafka", func(b *testing.B) {
		p := startKafkaPipeline(b, kafkaVariants[0])
		benchmarkIdle(b, benchWarmup, func(ctx context.Context, i int) error {
			return p.one(ctx, i)
		}, true, idleKafkaHops)
	})
	b.Run("gateway", func(b *testing.B) {
		p := startKafkaPipeline(b, kafkaVariants[0])
		g := startBenchGateway(b, p.pipeline)
		benchmarkIdle(b, benchWarmup, func(ctx context.Context, i int) error {
			return g.search(ctx, p.queries[i%len(p.queries)])
		}, true, 0)
	})
}

// idleKafkaHops are the Kafka hops of an idle request: requests,
// candidates, results.
const idleKafkaHops = 3

// idleServe serves request i, one way or another.
type idleServe func(ctx context.Context, i int) error

// inProcessIdle returns the in-process way of serving request i, and the
// warm-up it needs (every query once).
func inProcessIdle(b *testing.B) (idleServe, int) {
	p := inProcess{idx: benchIndex(b)}
	queries := benchQueries(b)
	return func(ctx context.Context, i int) error {
		_, err := p.serve(ctx, benchRequest(queries, i))
		return err
	}, len(queries)
}

// benchmarkIdle runs serve for warmup requests, then times b.N more, one
// at a time, and reports their percentiles. When paired (every variant but
// the in-process one itself), each request is also served in process,
// beside it in the same run (see BenchmarkIdleLatency), and the difference
// of the two paths is reported; hops > 0 shares the p50 difference out
// over that many hops (hop-p50-µs).
func benchmarkIdle(b *testing.B, warmup int, serve idleServe, paired bool, hops int) {
	ctx, cancel := context.WithTimeout(b.Context(), benchTimeout)
	defer cancel()
	work, workWarmup := inProcessIdle(b)
	for i := range max(warmup, workWarmup) {
		if err := serve(ctx, i); err != nil {
			b.Fatalf("warm-up request %d: %v", i, err)
		}
		if !paired {
			continue
		}
		if err := work(ctx, i); err != nil {
			b.Fatalf("warm-up request %d in process: %v", i, err)
		}
	}
	latencies, inproc := make([]time.Duration, b.N), make([]time.Duration, b.N)
	timed := func(f idleServe, i int) (time.Duration, error) {
		start := time.Now()
		err := f(ctx, i)
		return time.Since(start), err
	}
	b.ResetTimer()
	for i := range b.N {
		var err, werr error
		n := warmup + i
		if paired && i%2 == 0 {
			inproc[i], werr = timed(work, n)
		}
		latencies[i], err = timed(serve, n)
		if paired && i%2 == 1 {
			inproc[i], werr = timed(work, n)
		}
		if err = cmp.Or(err, werr); err != nil {
			b.Fatalf("request %d: %v", n, err)
		}
	}
	b.StopTimer()
	p50, p99 := reportLatency(b, latencies)
	if !paired {
		return
	}
	slices.Sort(inproc)
	w50, w99 := percentile(inproc, 0.50), percentile(inproc, 0.99)
	b.ReportMetric(float64(w50.Microseconds()), "inproc-p50-µs")
	b.ReportMetric(float64(w99.Microseconds()), "inproc-p99-µs")
	b.ReportMetric(float64((p99-w99).Microseconds())/1000, "p99-over-inproc-ms")
	if hops > 0 {
		b.ReportMetric(float64((p50-w50).Microseconds())/float64(hops), "hop-p50-µs")
	}
}

// one publishes request i and waits for its result.
func (p *kafkaPipeline) one(ctx context.Context, i int) error {
	call, err := p.client.Start(ctx, benchRequest(p.queries, i), true)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	out, err := call.Wait(ctx, benchTimeout)
	switch {
	case err != nil:
		return fmt.Errorf("request %s: %w", call.Request.RequestID, err)
	case out.Failed:
		return fmt.Errorf("request %s dead-lettered on %s: %s", call.Request.RequestID, out.Topic, out.Reason)
	}
	return nil
}

// benchGateway is an HTTP gateway in front of a pipeline and a client of
// it that keeps its connection alive.
type benchGateway struct {
	url    string
	client *http.Client
}

func startBenchGateway(b *testing.B, pl *pipeline.Pipeline) *benchGateway {
	b.Helper()
	g, c, err := pl.NewGateway(b.Context(), gateway.Config{Timeout: benchTimeout})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(g)
	b.Cleanup(func() {
		srv.Close()
		_ = c.Close(context.Background())
	})
	client := srv.Client()
	b.Cleanup(client.CloseIdleConnections)
	return &benchGateway{url: srv.URL + "/v1/search", client: client}
}

// search posts one query and reads the whole answer.
func (g *benchGateway) search(ctx context.Context, query string) error {
	body, err := json.Marshal(struct {
		Query string `json:"query"`
	}{query})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var answer gateway.SearchResponse
	derr := json.NewDecoder(resp.Body).Decode(&answer)
	_, _ = io.Copy(io.Discard, resp.Body) // reuse the connection
	switch {
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("gateway answered %s", resp.Status)
	case derr != nil:
		return fmt.Errorf("read answer: %w", derr)
	}
	return nil
}
