// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
)

// locationRE is the form of POST /v1/requests's Location.
var locationRE = regexp.MustCompile(`^/v1/requests/[0-9a-f]{32}$`)

// getResult is one GET answer: status, Retry-After and the JSON body.
type getResult struct {
	status     int
	retryAfter string
	body       map[string]any
	raw        string
}

// code is the body's error code, "" without one.
func (r getResult) code() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func getJSON(t *testing.T, client *http.Client, url string) getResult {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	res := getResult{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), raw: string(b)}
	if err := json.Unmarshal(b, &res.body); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q: body is not JSON: %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return res
}

// enqueue POSTs body to /v1/requests with client and returns the Location.
func enqueue(t *testing.T, client *http.Client, base, body string) string {
	t.Helper()
	resp, err := client.Post(base+"/v1/requests", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusAccepted || !locationRE.MatchString(loc) {
		t.Fatalf("status %d Location %q body %s", resp.StatusCode, loc, b)
	}
	return loc
}

// awaitResult polls GET url until it is no longer pending.
func awaitResult(t *testing.T, client *http.Client, url string) getResult {
	t.Helper()
	var res getResult
	poll.Until(t, 10*time.Second, func() bool {
		res = getJSON(t, client, url)
		return res.status != http.StatusAccepted
	}, "result of %s", url)
	return res
}

// serveMutualTLS serves h's gateway over HTTPS requiring client
// certificates of ca, and returns its URL and the HTTPS clients of two
// callers with their own certificates.
func serveMutualTLS(t *testing.T, h *harness, cfg gateway.Config) (url string, a, b *http.Client) {
	t.Helper()
	ca := tlstest.NewCA(t, "results")
	pair := ca.Server("gateway")
	cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLSClientCAFile = pair.CertFile, pair.KeyFile, ca.CertFile
	g, c, err := h.pipeline().NewGateway(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := cfg.ServerTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(g)
	srv.TLS = tc
	srv.StartTLS()
	t.Cleanup(func() {
		srv.Close()
		_ = c.Close(t.Context())
	})
	client := func(name string) *http.Client {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Client(name).Cert}}}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Timeout: 5 * time.Second, Transport: tr}
	}
	return srv.URL, client("caller-a"), client("caller-b")
}

// Issue 27 #6: caller A enqueues, sees its request pending while
// enrichment is held, then polls its result, the same answer as POST
// /v1/search gives; caller B, with its own client certificate, gets 404
// for A's result, as for an id that does not exist, and reads its own.
func TestAsyncResultOnlyForItsCaller(t *testing.T) {
	h := newHarness(t, 3)
	held := &gatedIndex{Index: h.idx, release: make(chan struct{})}
	h.startWorkersOn(h.idx, held)
	url, a, b := serveMutualTLS(t, h, gateway.Config{})

	locA := enqueue(t, a, url, `{"query":"gzip","request_id":"async-a","top_k":3}`)
	pending := getJSON(t, a, url+locA)
	if pending.status != http.StatusAccepted || pending.body["state"] != "pending" || pending.retryAfter != "1" ||
		pending.body["request_id"] != "async-a" || len(pending.body["trace_id"].(string)) != 32 {
		t.Fatalf("pending: status %d Retry-After %q body %s", pending.status, pending.retryAfter, pending.raw)
	}
	if res := getJSON(t, b, url+locA); res.status != http.StatusNotFound || res.code() != "not_found" {
		t.Fatalf("B reads A's pending request: status %d body %s", res.status, res.raw)
	}
	close(held.release)

	res := awaitResult(t, a, url+locA)
	docs, _ := res.body["documents"].([]any)
	if res.status != http.StatusOK || res.body["request_id"] != "async-a" || res.body["trace_id"] != pending.body["trace_id"] ||
		len(docs) == 0 || len(docs) > 3 || res.body["timings"] == nil {
		t.Fatalf("A's result: status %d body %s", res.status, res.raw)
	}
	if again := getJSON(t, a, url+locA); again.status != http.StatusOK || again.raw != res.raw {
		t.Fatalf("second read: status %d body %s", again.status, again.raw)
	}
	// B: A's result id with B's certificate, an id that never existed,
	// and A's request id in place of a result id.
	unknown := getJSON(t, b, url+"/v1/requests/"+strings.Repeat("0", 32))
	forA := getJSON(t, b, url+locA)
	if forA.status != http.StatusNotFound || forA.raw != unknown.raw {
		t.Fatalf("B reads A's result: status %d body %s; unknown id: %s", forA.status, forA.raw, unknown.raw)
	}
	if byRequestID := getJSON(t, b, url+"/v1/requests/async-a"); byRequestID.status != http.StatusBadRequest || byRequestID.code() != "invalid_id" {
		t.Fatalf("B reads by A's request id: status %d body %s", byRequestID.status, byRequestID.raw)
	}
	locB := enqueue(t, b, url, `{"query":"parse a URL query string","request_id":"async-b"}`)
	if res := awaitResult(t, b, url+locB); res.status != http.StatusOK || res.body["request_id"] != "async-b" {
		t.Fatalf("B's own result: status %d body %s", res.status, res.raw)
	}
	if res := getJSON(t, a, url+locB); res.status != http.StatusNotFound {
		t.Fatalf("A reads B's result: status %d body %s", res.status, res.raw)
	}
}

// A result is readable for ResultRetention after its POST, then 404; a
// request whose result has not arrived by then is no longer awaited: the
// result arriving later is counted late.
func TestAsyncResultExpires(t *testing.T) {
	h := newHarness(t, 1)
	held := &gatedIndex{Index: h.idx, release: make(chan struct{})}
	h.startWorkersOn(h.idx, held)
	const retention = 400 * time.Millisecond
	srv, c := h.gateway(gateway.Config{ResultRetention: retention})
	client := srv.Client()

	start := time.Now() // the retention runs from the POST
	loc := enqueue(t, client, srv.URL, `{"query":"gzip"}`)
	if res := getJSON(t, client, srv.URL+loc); res.status != http.StatusAccepted {
		t.Fatalf("status %d body %s", res.status, res.raw)
	}
	var gone getResult
	poll.Until(t, 5*time.Second, func() bool {
		gone = getJSON(t, client, srv.URL+loc)
		return gone.status == http.StatusNotFound
	}, "pending request expires")
	if took := time.Since(start); took < retention || gone.code() != "not_found" || !strings.Contains(gone.raw, "expired") {
		t.Fatalf("after %v: body %s", took, gone.raw)
	}
	close(held.release)
	poll.Until(t, 10*time.Second, func() bool { return c.Collector.Late() == 1 }, "the late result counted late (late=%d)", c.Collector.Late())

	start = time.Now()
	loc = enqueue(t, client, srv.URL, `{"query":"gzip"}`)
	if res := awaitResult(t, client, srv.URL+loc); res.status != http.StatusOK {
		t.Fatalf("status %d body %s", res.status, res.raw)
	}
	poll.Until(t, 5*time.Second, func() bool { return getJSON(t, client, srv.URL+loc).status == http.StatusNotFound }, "result expires")
	if took := time.Since(start); took < retention {
		t.Fatalf("result gone after %v, before its retention %v", took, retention)
	}
}

// Beyond MaxResults the oldest held request is evicted, and its caller is
// told so (404 evicted) until its retention ends; the others stay.
func TestAsyncResultsEvictTheOldest(t *testing.T) {
	h := newHarness(t, 3)
	h.startWorkers()
	srv, _ := h.gateway(gateway.Config{MaxResults: 2})
	client := srv.Client()
	var locs []string
	for _, q := range []string{"gzip", "json", "http client"} {
		locs = append(locs, enqueue(t, client, srv.URL, `{"query":"`+q+`"}`))
	}
	if res := getJSON(t, client, srv.URL+locs[0]); res.status != http.StatusNotFound || res.code() != "evicted" {
		t.Fatalf("oldest: status %d body %s", res.status, res.raw)
	}
	for _, loc := range locs[1:] {
		if res := awaitResult(t, client, srv.URL+loc); res.status != http.StatusOK {
			t.Fatalf("%s: status %d body %s", loc, res.status, res.raw)
		}
	}
}

// A GET that lands on another gateway instance than the one that
// accepted the POST gets 404: results are held per instance (route a
// caller's requests to one instance).
func TestAsyncResultIsHeldByItsInstance(t *testing.T) {
	h := newHarness(t, 3)
	h.startWorkers()
	a, _ := h.gateway(gateway.Config{})
	b, _ := h.gateway(gateway.Config{})
	loc := enqueue(t, a.Client(), a.URL, `{"query":"gzip"}`)
	if res := awaitResult(t, a.Client(), a.URL+loc); res.status != http.StatusOK {
		t.Fatalf("status %d body %s", res.status, res.raw)
	}
	if res := getJSON(t, b.Client(), b.URL+loc); res.status != http.StatusNotFound || res.code() != "not_found" {
		t.Fatalf("other instance: status %d body %s", res.status, res.raw)
	}
}

// A result id that is not one is refused with 400 and the field named.
func TestAsyncResultBadIDs(t *testing.T) {
	h := newHarness(t, 1)
	srv, _ := h.gateway(gateway.Config{})
	for _, id := range []string{"x", strings.Repeat("A", 32), strings.Repeat("0", 31), strings.Repeat("0", 33), "%00" + strings.Repeat("0", 29), "async-1"} {
		res := getJSON(t, srv.Client(), srv.URL+"/v1/requests/"+id)
		e, _ := res.body["error"].(map[string]any)
		if res.status != http.StatusBadRequest || e["code"] != "invalid_id" || e["field"] != "id" || e["message"] == "" {
			t.Errorf("%q: status %d body %s", id, res.status, res.raw)
		}
	}
}

// A dead-lettered enqueued request reads as POST /v1/search answers a
// dead-lettered search: one mapping of outcomes to answers.
func TestAsyncResultDeadLetteredAsTheSearch(t *testing.T) {
	h := newHarness(t, 1)
	h.runPoisonWorkers()
	srv, _ := h.gateway(gateway.Config{})
	sync := post(t, srv.URL+"/v1/search", "application/json", `{"query":"poison gzip","request_id":"poison-sync"}`, nil)
	loc := enqueue(t, srv.Client(), srv.URL, `{"query":"poison gzip","request_id":"poison-async"}`)
	async := awaitResult(t, srv.Client(), srv.URL+loc)
	msg := func(b map[string]any) any { return b["error"].(map[string]any)["message"] }
	if sync.status != http.StatusBadGateway || async.status != sync.status || async.code() != "dead_lettered" ||
		async.body["request_id"] != "poison-async" || msg(async.body) != msg(sync.body) {
		t.Fatalf("search: %d %s; enqueued: %d %s", sync.status, sync.raw, async.status, async.raw)
	}
}
