// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/producer"
)

func (h *harness) gateway(cfg gateway.Config) (*httptest.Server, *producer.Client) {
	h.t.Helper()
	g, c, err := h.pipeline().NewGateway(h.t.Context(), cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	h.t.Cleanup(func() {
		srv.Close()
		_ = c.Close(h.t.Context())
	})
	return srv, c
}

type httpResult struct {
	status int
	body   map[string]any
	raw    string
}

func post(t *testing.T, url, contentType, body string, header http.Header) httpResult {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	res := httpResult{status: resp.StatusCode, raw: string(b)}
	if err := json.Unmarshal(b, &res.body); err != nil {
		t.Fatalf("status %d: body is not JSON: %q", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	return res
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestGatewaySearchIsOneTraceFromTheServerSpan(t *testing.T) {
	h := newHarness(t, 3)
	stop := h.startWorkers()
	srv, _ := h.gateway(gateway.Config{})

	if get(t, srv.URL+"/healthz") != http.StatusOK || get(t, srv.URL+"/readyz") != http.StatusOK {
		t.Fatal("health or readiness check failed")
	}
	res := post(t, srv.URL+"/v1/search", "application/json", `{"query":"parse a URL query string","top_k":4}`, nil)
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	docs, _ := res.body["documents"].([]any)
	traceID, _ := res.body["trace_id"].(string)
	if len(docs) == 0 || len(docs) > 4 || res.body["request_id"] == "" || len(traceID) != 32 {
		t.Fatalf("body %s", res.raw)
	}
	stop()
	spans := byTrace(h.recorded())[traceID]
	checkTrace(t, spans, h.cfg, "POST /v1/search")
	for _, s := range spans {
		if s.Name == "POST /v1/search" {
			if s.Kind != "server" || s.Attrs["kretrieve.request.id"] != res.body["request_id"] {
				t.Errorf("server span %+v", s)
			}
		}
	}
}

func TestGatewayAsyncRequest(t *testing.T) {
	h := newHarness(t, 3)
	srv, _ := h.gateway(gateway.Config{})
	res := post(t, srv.URL+"/v1/requests", "application/json; charset=utf-8", `{"query":"gzip","request_id":"async-1"}`, nil)
	if res.status != http.StatusAccepted || res.body["request_id"] != "async-1" || len(res.body["trace_id"].(string)) != 32 {
		t.Fatalf("status %d body %s", res.status, res.raw)
	}
}

func TestGatewayTimeoutReturnsIDs(t *testing.T) {
	h := newHarness(t, 3)
	// Enrichment takes the request within its deadline and then stalls
	// until the gateway has answered 504. (Workers that came up only after
	// the timeout would expire the request instead, with no reply at all:
	// TestGatewayTimeoutThenExpired.)
	slow := &gatedIndex{Index: h.idx, release: make(chan struct{})}
	h.startWorkersOn(h.idx, slow)
	srv, c := h.gateway(gateway.Config{Timeout: 300 * time.Millisecond})
	res := post(t, srv.URL+"/v1/search", "application/json", `{"query":"gzip","request_id":"slow-1"}`, nil)
	if res.status != http.StatusGatewayTimeout || res.body["request_id"] != "slow-1" || len(res.body["trace_id"].(string)) != 32 {
		t.Fatalf("status %d body %s", res.status, res.raw)
	}
	// Enrichment finishes later: the late reply is dropped and counted.
	close(slow.release)
	eventually(t, func() bool { return c.Collector.Late() == 1 }, "late reply counted")
}

func TestGatewayRejectsBadInput(t *testing.T) {
	h := newHarness(t, 1)
	srv, _ := h.gateway(gateway.Config{MaxBodyBytes: 8 << 10})
	tests := []struct {
		name, contentType, body string
		status                  int
		code, field             string
	}{
		{"not json content type", "text/plain", `{"query":"x"}`, 415, "unsupported_media_type", ""},
		{"missing content type", "", `{"query":"x"}`, 415, "unsupported_media_type", ""},
		{"body too large", "application/json", `{"query":"` + strings.Repeat("a", 9<<10) + `"}`, 413, "body_too_large", ""},
		{"malformed json", "application/json", `{"query":`, 400, "invalid_request", ""},
		{"empty query", "application/json", `{"query":""}`, 400, "invalid_request", "query"},
		{"query too long", "application/json", `{"query":"` + strings.Repeat("a", 4097) + `"}`, 400, "invalid_request", "query"},
		{"top_k too big", "application/json", `{"query":"x","top_k":101}`, 400, "invalid_request", "top_k"},
		{"top_k zero", "application/json", `{"query":"x","top_k":0}`, 400, "invalid_request", "top_k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/v1/search", "/v1/requests"} {
				res := post(t, srv.URL+path, tt.contentType, tt.body, nil)
				e, _ := res.body["error"].(map[string]any)
				if res.status != tt.status || e["code"] != tt.code || (tt.field != "" && e["field"] != tt.field) || e["message"] == "" {
					t.Fatalf("%s: status %d body %s", path, res.status, res.raw)
				}
			}
		})
	}
}

func TestGatewayContinuesClientTraceparent(t *testing.T) {
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	hdr := http.Header{"Traceparent": {"00-" + traceID + "-" + spanID + "-01"}}
	t.Run("continued", func(t *testing.T) {
		h := newHarness(t, 1)
		h.startWorkers()
		srv, _ := h.gateway(gateway.Config{})
		res := post(t, srv.URL+"/v1/search", "application/json", `{"query":"gzip"}`, hdr)
		if res.status != 200 || res.body["trace_id"] != traceID {
			t.Fatalf("status %d body %s", res.status, res.raw)
		}
		found := false
		for _, s := range byTrace(h.recorded())[traceID] {
			if s.Name == "POST /v1/search" {
				found = true
				if s.ParentID != spanID {
					t.Fatalf("server span parent %s, want %s", s.ParentID, spanID)
				}
			}
		}
		if !found {
			t.Fatal("no server span in the client's trace")
		}
	})
	t.Run("trust boundary", func(t *testing.T) {
		h := newHarness(t, 1)
		h.startWorkers()
		srv, _ := h.gateway(gateway.Config{TrustBoundary: true})
		res := post(t, srv.URL+"/v1/search", "application/json", `{"query":"gzip"}`, hdr)
		got, _ := res.body["trace_id"].(string)
		if res.status != 200 || got == traceID || len(got) != 32 {
			t.Fatalf("status %d body %s", res.status, res.raw)
		}
		for _, s := range byTrace(h.recorded())[got] {
			if s.Name == "POST /v1/search" {
				if s.ParentID != "" || len(s.Links) != 1 || s.Links[0] != spanID {
					t.Fatalf("server span parent %q links %v: want a new root linked to %s", s.ParentID, s.Links, spanID)
				}
				return
			}
		}
		t.Fatal("no server span")
	})
}

func TestTwoGatewaysGetTheirOwnReplies(t *testing.T) {
	h := newHarness(t, 6)
	h.startWorkers()
	a, ca := h.gateway(gateway.Config{})
	b, cb := h.gateway(gateway.Config{})
	var wg sync.WaitGroup
	for i := range 40 {
		srv := a
		if i%2 == 1 {
			srv = b
		}
		wg.Go(func() {
			id := fmt.Sprintf("gw-%d", i)
			var buf bytes.Buffer
			_ = json.NewEncoder(&buf).Encode(map[string]any{"request_id": id, "query": "encode json", "top_k": 3})
			res := post(t, srv.URL+"/v1/search", "application/json", buf.String(), nil)
			if res.status != 200 || res.body["request_id"] != id {
				t.Errorf("%s: status %d body %s", id, res.status, res.raw)
			}
		})
	}
	wg.Wait()
	// Each instance reads every reply and keeps its own: the other's are
	// counted as foreign, none as late or duplicate.
	eventually(t, func() bool { return ca.Collector.Unexpected() == 20 && cb.Collector.Unexpected() == 20 },
		"foreign replies counted (a=%d b=%d)", ca.Collector.Unexpected(), cb.Collector.Unexpected())
	if ca.Collector.Late()+cb.Collector.Late()+ca.Collector.Duplicates()+cb.Collector.Duplicates() != 0 {
		t.Fatal("late or duplicate replies")
	}
}
