// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
// read, and reports p50-µs and p99-µs. The difference between kafka's and
// inprocess's p50, divided by the three hops, is what one Kafka hop adds
// to a request (bench/benchratio prints it). See bench/doc.go for the
// invocation.
func BenchmarkIdleLatency(b *testing.B) {
	b.Run("inprocess", func(b *testing.B) {
		p := inProcess{idx: benchIndex(b)}
		queries := benchQueries(b)
		benchmarkIdle(b, max(benchWarmup, len(queries)), func(ctx context.Context, i int) error {
			_, err := p.serve(ctx, benchRequest(queries, i))
			return err
		})
	})
	b.Run("kafka", func(b *testing.B) {
		p := startKafkaPipeline(b, kafkaVariants[0])
		benchmarkIdle(b, benchWarmup, func(ctx context.Context, i int) error {
			return p.one(ctx, i)
		})
	})
	b.Run("gateway", func(b *testing.B) {
		p := startKafkaPipeline(b, kafkaVariants[0])
		g := startBenchGateway(b, p.pipeline)
		benchmarkIdle(b, benchWarmup, func(ctx context.Context, i int) error {
			return g.search(ctx, p.queries[i%len(p.queries)])
		})
	})
}

// benchmarkIdle runs serve for warmup requests, then times b.N more, one
// at a time, and reports their percentiles.
func benchmarkIdle(b *testing.B, warmup int, serve func(ctx context.Context, i int) error) {
	ctx, cancel := context.WithTimeout(b.Context(), benchTimeout)
	defer cancel()
	for i := range warmup {
		if err := serve(ctx, i); err != nil {
			b.Fatalf("warm-up request %d: %v", i, err)
		}
	}
	latencies := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := serve(ctx, warmup+i); err != nil {
			b.Fatalf("request %d: %v", warmup+i, err)
		}
		latencies[i] = time.Since(start)
	}
	b.StopTimer()
	reportLatency(b, latencies)
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
