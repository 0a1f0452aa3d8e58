// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
)

// TestDeadlineCrossesThePipeline runs the real stages: a request whose
// caller's deadline has passed is expired by retrieval (no candidates,
// no result, counted), and a live one's candidates carry its deadline on
// to enrichment.
func TestDeadlineCrossesThePipeline(t *testing.T) {
	h := newHarness(t, 1)
	h.startWorkers()
	client := h.client(true)
	top := h.cfg.Topology()

	past, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	dead, err := client.Start(past, messages.Request{RequestID: "dl-expired", Query: "gzip reader"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dead.Acked(t.Context()); err != nil {
		t.Fatal(err)
	}
	live, cancelLive := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancelLive()
	call, err := client.Start(live, messages.Request{RequestID: "dl-live", Query: "gzip reader"}, true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := call.Wait(live, 20*time.Second)
	if err != nil || out.Failed || len(out.Result.Documents) == 0 || len(out.Result.Degraded) != 0 {
		t.Fatalf("live request: %+v, %v", out, err)
	}
	poll.Until(t, 10*time.Second, func() bool { return expiredCount(t, h) == 1 }, "%s did not reach 1", otelnames.MetricRequestsExpired)

	want, _ := live.Deadline()
	cands := keyed(t, h, top.Stages[0].Output)
	if _, ok := cands["dl-expired"]; ok {
		t.Error("the expired request has candidates: retrieval worked on it")
	}
	c, ok := cands["dl-live"]
	if !ok {
		t.Fatal("no candidates for the live request")
	}
	if got := headerValue(c, messages.HeaderDeadline); got != messages.FormatDeadline(want) {
		t.Errorf("candidates carry deadline %q, want the request's %q", got, messages.FormatDeadline(want))
	}
	if _, ok := keyed(t, h, top.Results())["dl-expired"]; ok {
		t.Error("the expired request has a result")
	}
}

// TestGatewayRefusesBehindABacklog: with a request waiting 5 s for the
// first stage (its group committed before it), the gateway (1 s budget)
// measures the first edge's queue wait and answers searches 503 with a
// Retry-After; once a worker drains the backlog, searches are answered.
func TestGatewayRefusesBehindABacklog(t *testing.T) {
	h := newHarness(t, 1)
	top := h.cfg.Topology()
	cl, err := kgo.NewClient(kafkaclient.Options(h.cfg.Kafka, h.logger, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	old := &kgo.Record{Topic: top.Requests(), Key: []byte("old"), Value: []byte(`{"query":"gzip"}`), Timestamp: time.Now().Add(-5 * time.Second)}
	if err := cl.ProduceSync(t.Context(), old).FirstErr(); err != nil {
		t.Fatal(err)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: top.Requests(), Partition: 0, At: 0, LeaderEpoch: -1})
	if _, err := kadm.NewClient(cl).CommitOffsets(t.Context(), top.Stages[0].Group, offsets); err != nil {
		t.Fatal(err)
	}

	srv, _ := h.gateway(gateway.Config{Timeout: time.Second})
	var refused *http.Response
	poll.Until(t, 15*time.Second, func() bool {
		resp, err := http.Post(srv.URL+"/v1/search", "application/json", strings.NewReader(`{"query":"gzip"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		refused = resp
		return resp.StatusCode == http.StatusServiceUnavailable
	}, "the gateway did not refuse searches behind a 5 s backlog")
	if ra, err := strconv.Atoi(refused.Header.Get("Retry-After")); err != nil || ra < 4 || ra > 60 {
		t.Errorf("Retry-After %q, want the wait beyond the budget (≥ 4 s)", refused.Header.Get("Retry-After"))
	}

	h.startWorkers()
	poll.Until(t, 20*time.Second, func() bool {
		resp, err := http.Post(srv.URL+"/v1/search", "application/json", strings.NewReader(`{"query":"gzip"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, "searches were not answered once the backlog drained")
}

// TestGatewayTimeoutThenExpired: a search answered 504 because no worker
// ran is not worked on once the workers come up: retrieval expires it, and
// no late reply is produced.
func TestGatewayTimeoutThenExpired(t *testing.T) {
	h := newHarness(t, 3) // no workers: nothing answers
	srv, c := h.gateway(gateway.Config{Timeout: 300 * time.Millisecond})
	res := post(t, srv.URL+"/v1/search", "application/json", `{"query":"gzip","request_id":"gone-1"}`, nil)
	if res.status != http.StatusGatewayTimeout {
		t.Fatalf("status %d body %s", res.status, res.raw)
	}
	h.startWorkers()
	eventually(t, func() bool { return expiredCount(t, h) == 1 }, "the request expired")
	if n := topicRecords(t, h, h.cfg.Topology().Stages[0].Output); n != 0 || c.Collector.Late() != 0 {
		t.Errorf("%d candidates, %d late replies for a request whose caller was told: want none", n, c.Collector.Late())
	}
}

// gatedIndex is an index whose Highlight waits until release is closed
// (or its context ends).
type gatedIndex struct {
	*search.Index
	release chan struct{}
}

func (g *gatedIndex) Highlight(ctx context.Context, query string, ids []string, maxRunes int) (map[string]search.Highlighted, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Index.Highlight(ctx, query, ids, maxRunes)
}

// startWorkersOn starts a retrieval worker over retrieval's index and an
// enrichment worker over enrichment's; they stop at the test's end.
func (h *harness) startWorkersOn(retrieval, enrichment pipeline.Index) {
	h.t.Helper()
	rw, err := h.pipeline().NewWorker(messages.StageRetrieval, retrieval)
	if err != nil {
		h.t.Fatal(err)
	}
	ew, err := h.pipeline().NewWorker(messages.StageEnrichment, enrichment)
	if err != nil {
		h.t.Fatal(err)
	}
	runWorkers(h.t, rw, ew)
}

// expiredCount returns the sum of otelnames.MetricRequestsExpired.
func expiredCount(t *testing.T, h *harness) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == otelnames.MetricRequestsExpired {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// keyed returns the records of topic by key, read up to its end offsets.
func keyed(t *testing.T, h *harness, topic string) map[string]*kgo.Record {
	t.Helper()
	want := topicRecords(t, h, topic)
	cl, err := kgo.NewClient(append(kafkaclient.Options(h.cfg.Kafka, h.logger, nil),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]*kgo.Record{}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for n := int64(0); n < want && ctx.Err() == nil; {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r; n++ })
	}
	return got
}

// headerValue returns the value of r's header key, or "".
func headerValue(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
