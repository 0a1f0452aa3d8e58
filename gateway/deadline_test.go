// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
)

// TestGatewaySetsTheDeadline: a search's request record carries the
// caller's deadline, the gateway's Timeout from the request's arrival; an
// enqueued request (nobody waits for its result) carries none.
func TestGatewaySetsTheDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	sg := newSecGateway(t, gateway.Config{Timeout: timeout})
	srv := httptest.NewServer(sg.g)
	defer srv.Close()
	before := time.Now()
	for _, c := range []struct{ path, id string }{{"/v1/search", "dl-search"}, {"/v1/requests", "dl-enqueue"}} {
		resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(fmt.Sprintf(`{"query":"gzip","request_id":%q}`, c.id)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	after := time.Now()
	recs := readRequests(t, sg, 2)
	v, ok := recordHeader(recs["dl-search"], messages.HeaderDeadline)
	d, _, err := messages.ParseDeadline([]byte(v), time.Now())
	if !ok || err != nil || d.Before(before.Add(timeout).Truncate(time.Millisecond)) || d.After(after.Add(timeout).Add(time.Millisecond)) {
		t.Errorf("search record deadline %q (%v, %v), want within [%v, %v]", v, d, err, before.Add(timeout), after.Add(timeout))
	}
	if v, ok := recordHeader(recs["dl-enqueue"], messages.HeaderDeadline); ok {
		t.Errorf("enqueued record carries a deadline %q, want none", v)
	}
}

// TestGatewayRefusesWhatCannotFinishInTime: while the first edge's queue
// wait exceeds a search's budget, searches are answered 503 with a
// Retry-After at once, publish nothing and are counted as refusals with
// reason queue_wait; enqueued requests are still taken, and searches are
// admitted again once the wait is back within the budget.
func TestGatewayRefusesWhatCannotFinishInTime(t *testing.T) {
	const timeout = 500 * time.Millisecond
	var wait atomic.Int64 // the queue wait reported, ns
	wait.Store(int64(3200 * time.Millisecond))
	reader := sdkmetric.NewManualReader()
	sg := newSecGateway(t, gateway.Config{Timeout: timeout},
		gateway.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		gateway.WithQueueWait(func() (time.Duration, bool) { return time.Duration(wait.Load()), true }))
	srv := httptest.NewServer(sg.g)
	defer srv.Close()
	post := func(path, id string) (int, http.Header, string, time.Duration) {
		start := time.Now()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(fmt.Sprintf(`{"query":"gzip","request_id":%q}`, id)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b), time.Since(start)
	}
	for i := range 3 {
		status, h, body, took := post("/v1/search", "refused-"+strconv.Itoa(i))
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "3" || !strings.Contains(body, `"overloaded"`) || took > timeout {
			t.Errorf("search under a 3.2 s queue wait: %d Retry-After %q after %s: %s; want 503, Retry-After 3, at once",
				status, h.Get("Retry-After"), took, body)
		}
	}
	if status, _, body, _ := post("/v1/requests", "enqueued"); status != http.StatusAccepted {
		t.Errorf("enqueue under a long queue wait: %d %s, want 202", status, body)
	}
	wait.Store(int64(100 * time.Millisecond))
	if status, _, body, _ := post("/v1/search", "admitted"); status == http.StatusServiceUnavailable {
		t.Errorf("search under a 100 ms queue wait refused: %s", body)
	}
	recs := readRequests(t, sg, 2)
	for id := range recs {
		if strings.HasPrefix(id, "refused-") {
			t.Errorf("refused request %s was published", id)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	byReason := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == otelnames.MetricGatewayRefused {
				for _, dp := range sum.DataPoints {
					r, _ := dp.Attributes.Value(otelnames.RefusedReason)
					byReason[r.AsString()] += dp.Value
				}
			}
		}
	}
	if byReason["queue_wait"] != 3 || len(byReason) != 1 {
		t.Errorf("%s by reason = %v, want 3 queue_wait", otelnames.MetricGatewayRefused, byReason)
	}
}

// readRequests returns the records of the requests topic by key, polling
// until want arrived.
func readRequests(t *testing.T, sg *secGateway, want int) map[string]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(sg.cluster.ListenAddrs()...), kgo.ConsumeTopics(messages.DefaultTopics().Requests),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]*kgo.Record{}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for len(got) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Key)] = r })
	}
	if len(got) < want {
		t.Fatalf("requests topic: %d records, want %d", len(got), want)
	}
	return got
}

// recordHeader returns the value of r's header key and whether it is there.
func recordHeader(r *kgo.Record, key string) (string, bool) {
	if r == nil {
		return "", false
	}
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}
