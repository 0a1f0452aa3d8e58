// SPDX-License-Identifier: Apache-2.0

package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/search"
)

// canary is stored-XSS bait: it must reach the browser only JSON-escaped.
const canary = `<img src=x onerror=alert(1)></script><script>alert(2)</script>`

// newClients counts the Kafka clients created with the options it hooks.
type newClients struct{ n atomic.Int64 }

func (c *newClients) OnNewClient(*kgo.Client) { c.n.Add(1) }

// env is an in-process pipeline on the embedded broker: workers over an
// index with a canary document, pathway aggregates published every 50 ms,
// one poison request and one canary dead letter.
type env struct {
	p       *pipeline.Pipeline
	store   *spans.Store
	opts    []kgo.Opt
	clients *newClients
	logger  *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b := brokertest.NewBroker(t, 2)
	store := spans.NewStore()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(store))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	metrics := kafkatrace.NewMetrics()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := pipeline.New(pipeline.Config{
		Kafka:               kafkaclient.Config{Brokers: []string{b.Addr()}, ClientID: "test", Partitions: 2},
		ParentBasedSampling: true,
	}, pipeline.WithTracerProvider(tp), pipeline.WithMetrics(metrics), pipeline.WithLogger(logger),
		pipeline.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.EnsureTopics(ctx); err != nil {
		t.Fatal(err)
	}
	idx, err := search.NewMemory(ctx, "test", []search.Document{
		{ID: "canary", Title: "canary " + canary, Body: "canary image " + canary + " inside a document body"},
		{ID: "url", Title: "net/url", Body: "Package url parses URLs and implements query escaping."},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	ws, err := p.StartWorkers(ctx, idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = ws.Wait() })

	pubClient, err := kgo.NewClient(p.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pubClient.Close)
	if err := pathwaytopic.EnsureTopic(ctx, pubClient, 1, pathwaytopic.DefaultTopic); err != nil {
		t.Fatal(err)
	}
	pub, err := pathwaytopic.NewPublisher(pubClient, metrics, pathwaytopic.WithInterval(50*time.Millisecond), pathwaytopic.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = pub.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// A poison request, dead-lettered by retrieval, and a canary dead
	// letter as a worker would write it.
	requests := p.Topology().Requests()
	letter := deadletters.Build(&kgo.Record{Topic: requests, Key: []byte(canary), Value: []byte("{}"),
		Headers: []kgo.RecordHeader{{Key: "x-canary", Value: []byte(canary)}}},
		deadletters.Failure{Reason: "invalid request: " + canary, ErrorType: deadletters.ErrorTypePermanent, Attempts: 1, ConsumerGroup: "retrieval"}, 0)
	if err := pubClient.ProduceSync(ctx, &kgo.Record{Topic: requests, Value: []byte("not json")}, letter).FirstErr(); err != nil {
		t.Fatal(err)
	}
	clients := &newClients{}
	return &env{p: p, store: store, clients: clients, logger: logger,
		opts: append(p.ClientOptions(), kgo.WithHooks(clients))}
}

func (e *env) console(t *testing.T, cfg console.Config, opts ...console.Option) (*console.Console, *httptest.Server) {
	t.Helper()
	cfg.Topology = e.p.Topology()
	cfg.KafkaOptions = e.opts
	if cfg.Interval == 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	con, err := console.New(cfg, append([]console.Option{console.WithLogger(e.logger), console.WithSpanStore(e.store),
		console.WithRequestClient(func(ctx context.Context) (*producer.Client, error) { return e.p.NewClient(ctx, true) })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(con)
	t.Cleanup(func() { con.Close(); srv.Close() })
	return con, srv
}

// replay is the replay of the console command.
func (e *env) replay(ctx context.Context, rc dlq.ReplayConfig) (dlq.ReplayResult, error) {
	return dlq.Replay(ctx, e.p.ClientOptions(), e.p.Tracer(rc.Group), rc)
}

// call sends a request and checks the security headers of its answer;
// header is name, value pairs ("Host" sets the request's Host).
func call(t *testing.T, method, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkHeaders(t, method+" "+url, resp.Header)
	return resp.StatusCode, resp.Header, b
}

func checkHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Security-Policy": console.ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %s = %q, want %q", what, k, got, want)
		}
	}
	if strings.Contains(what, "/api/") && h.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Cache-Control = %q, want no-store", what, h.Get("Cache-Control"))
	}
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// noRawMarkup fails when an API body carries a raw <, > or &: record text
// must reach the browser JSON-escaped.
func noRawMarkup(t *testing.T, what string, b []byte) {
	t.Helper()
	if i := strings.IndexAny(string(b), "<>&"); i >= 0 {
		t.Errorf("%s: raw %q in the body at %d: %s", what, b[i], i, b[max(i-40, 0):min(i+40, len(b))])
	}
}

// TestLazyStart: the console creates no Kafka client and keeps no span
// until the first API request (pages and assets do not count), and closes
// them again when idle.
func TestLazyStart(t *testing.T) {
	e := newEnv(t)
	con, srv := e.console(t, console.Config{Idle: 200 * time.Millisecond})
	for _, path := range []string{"/", "/console/", "/console/assets/app.js", "/assets/app.css"} {
		if code, _, _ := call(t, "GET", srv.URL+path, ""); code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
	}
	// Spans end in the pipeline meanwhile: a request through a client of
	// the test's own.
	client, err := e.p.NewClient(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(context.Background())
	c, err := client.Start(context.Background(), messages.Request{Query: "url"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := e.clients.n.Load(); n != 0 || con.Started() {
		t.Fatalf("before any API request: %d Kafka clients created, started %v", n, con.Started())
	}
	if kept, _ := e.store.Trace(context.Background(), c.TraceID); len(kept) != 0 {
		t.Fatalf("before any API request the store kept %d spans", len(kept))
	}

	if code, _, b := call(t, "GET", srv.URL+"/api/slowest", ""); code != http.StatusOK {
		t.Fatalf("slowest: %d %s", code, b)
	}
	if n := e.clients.n.Load(); n == 0 || !con.Started() {
		t.Fatalf("after an API request: %d clients, started %v", n, con.Started())
	}
	poll.Until(t, 30*time.Second, func() bool { return !con.Started() }, "the console did not stop after its idle time")
}

// TestAPI runs every endpoint against the running pipeline, and checks the
// stored-XSS canary stays JSON-escaped everywhere.
func TestAPI(t *testing.T) {
	e := newEnv(t)
	_, srv := e.console(t, console.Config{})
	api := srv.URL + "/console/api"

	// Search: results, snippet as text with highlight ranges, per-stage
	// timings and the trace's spans.
	code, _, b := call(t, "POST", api+"/search", `{"query":"canary image","top_k":5}`, console.CSRFHeader, "1")
	if code != http.StatusOK {
		t.Fatalf("search: %d %s", code, b)
	}
	noRawMarkup(t, "search", b)
	type span struct {
		Name, Category, Kind string
		StartUS              int64 `json:"start_us"`
	}
	res := decode[struct {
		RequestID string `json:"request_id"`
		TraceID   string `json:"trace_id"`
		Documents []struct {
			ID, Title, Snippet string
			Highlights         [][2]int
		}
		Timings messages.Timings
		Spans   []span
	}](t, b)
	if len(res.Documents) == 0 || res.Documents[0].ID != "canary" {
		t.Fatalf("search: documents %+v", res.Documents)
	}
	d := res.Documents[0]
	if !strings.Contains(d.Snippet, canary) || len(d.Highlights) == 0 {
		t.Errorf("snippet %q highlights %v: want the canary as text and highlights", d.Snippet, d.Highlights)
	}
	for _, h := range d.Highlights {
		if got := strings.ToLower(d.Snippet[h[0]:h[1]]); got != "canary" && got != "image" {
			t.Errorf("highlight %v is %q, not a query term", h, got)
		}
	}
	if _, ok := res.Timings.Stage("retrieval"); !ok {
		t.Errorf("timings %+v: no retrieval", res.Timings)
	}
	cats := map[string]bool{}
	for _, s := range res.Spans {
		cats[s.Category] = true
	}
	if !cats["wait"] || !cats["work"] || !cats["send"] {
		t.Errorf("search spans %+v: want wait, work and send spans", res.Spans)
	}

	// The trace, from the console's spans.
	code, _, b = call(t, "GET", api+"/traces/"+res.TraceID, "")
	if code != http.StatusOK {
		t.Fatalf("trace: %d %s", code, b)
	}
	tr := decode[struct {
		TraceID string `json:"trace_id"`
		Source  string
		Spans   []span
	}](t, b)
	if tr.TraceID != res.TraceID || tr.Source != "console" || len(tr.Spans) < len(res.Spans) {
		t.Errorf("trace %s from %s with %d spans; search had %d", tr.TraceID, tr.Source, len(tr.Spans), len(res.Spans))
	}
	if code, _, b := call(t, "GET", api+"/traces/0123456789abcdef0123456789abcdef", ""); code != http.StatusNotFound || !strings.Contains(string(b), `"error"`) {
		t.Errorf("unknown trace: %d %s", code, b)
	}
	if code, _, _ := call(t, "GET", api+"/traces/%3Cscript%3E", ""); code != http.StatusBadRequest {
		t.Errorf("malformed trace id: %d", code)
	}

	// The slowest requests list the search.
	code, _, b = call(t, "GET", api+"/slowest", "")
	slow := decode[struct {
		Requests []struct {
			TraceID   string  `json:"trace_id"`
			RequestID string  `json:"request_id"`
			Duration  float64 `json:"duration_ms"`
		}
	}](t, b)
	found := false
	for _, r := range slow.Requests {
		found = found || r.TraceID == res.TraceID && r.RequestID == res.RequestID && r.Duration > 0
	}
	if code != http.StatusOK || !found {
		t.Errorf("slowest: %d %s: no trace %s", code, b, res.TraceID)
	}

	// The map: every stage and edge, throughput from the pathways, dead
	// letters with their reasons.
	type mapDoc struct {
		Stages []struct {
			Name        string
			DeadLetters int64 `json:"dead_letters"`
			TopReasons  []struct {
				Reason string
				Count  int
			} `json:"top_reasons"`
		}
		Edges []struct {
			Topic, From, To string
			MsgsPerSec      float64 `json:"msgs_per_sec"`
			EdgeP99         float64 `json:"edge_p99_ms"`
			LagRecords      *int64  `json:"lag_records"` // null: unknown
		}
	}
	// Throughput is per pathway window: traffic goes on while the map is
	// read.
	traffic, err := e.p.NewClient(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer traffic.Close(context.Background())
	send := func() {
		if c, err := traffic.Start(context.Background(), messages.Request{Query: "url"}, false); err == nil {
			_, _ = c.Acked(context.Background())
		}
	}
	var m mapDoc
	poll.Until(t, 30*time.Second, func() bool {
		send()
		code, _, b := call(t, "GET", api+"/map", "")
		if code != http.StatusOK {
			t.Fatalf("map: %d %s", code, b)
		}
		noRawMarkup(t, "map", b)
		m = decode[mapDoc](t, b)
		return len(m.Edges) == 3 && m.Edges[0].MsgsPerSec > 0 && m.Edges[1].MsgsPerSec > 0 && m.Stages[0].DeadLetters >= 2
	}, "the map never showed throughput and dead letters: %+v", &m)
	if m.Stages[0].Name != "retrieval" || m.Stages[1].Name != "enrichment" ||
		m.Edges[0].From != "origin" || m.Edges[0].To != "retrieval" || m.Edges[2].From != "enrichment" || m.Edges[2].To != "results" {
		t.Errorf("map shape: %+v", m)
	}
	if m.Edges[0].EdgeP99 <= 0 || m.Edges[0].LagRecords == nil || *m.Edges[0].LagRecords < 0 {
		t.Errorf("edge %+v: want a latency and a known lag", m.Edges[0])
	}
	if rs := m.Stages[0].TopReasons; len(rs) == 0 {
		t.Errorf("no top reasons: %+v", m.Stages[0])
	}

	// The exemplars of the pathway latency histograms, carried by the
	// pathway aggregates: slowest first, each naming its series, and
	// linking to traces the console answers.
	type exemplarDoc struct {
		TraceID string  `json:"trace_id"`
		Metric  string  `json:"metric"`
		ValueMS float64 `json:"value_ms"`
	}
	var exs []exemplarDoc
	answered := ""
	poll.Until(t, 30*time.Second, func() bool {
		send()
		code, _, b := call(t, "GET", api+"/slowest", "")
		if code != http.StatusOK {
			t.Fatalf("slowest: %d %s", code, b)
		}
		exs = decode[struct{ Exemplars []exemplarDoc }](t, b).Exemplars
		for _, ex := range exs {
			if code, _, _ := call(t, "GET", api+"/traces/"+ex.TraceID, ""); code == http.StatusOK {
				answered = ex.TraceID
				return true
			}
		}
		return false
	}, "slowest never listed an exemplar whose trace the console answers: %+v", &exs)
	if len(exs) > 20 {
		t.Errorf("%d exemplars, want at most 20", len(exs))
	}
	for i, ex := range exs {
		if len(ex.TraceID) != 32 || !strings.HasPrefix(ex.Metric, "kretrieve.pathway.latency ") || ex.ValueMS < 0 ||
			i > 0 && ex.ValueMS > exs[i-1].ValueMS {
			t.Errorf("exemplar %d of %+v: want a trace id, the series named, slowest first", i, exs)
		}
	}
	code, _, b = call(t, "GET", api+"/traces/"+answered, "")
	if tr := decode[struct{ Spans []span }](t, b); code != http.StatusOK || len(tr.Spans) == 0 {
		t.Errorf("exemplar trace %s: %d with %d spans", answered, code, len(tr.Spans))
	}

	// The event stream sends a map at once.
	resp, err := http.Get(api + "/events")
	if err != nil {
		t.Fatal(err)
	}
	checkHeaders(t, "GET /api/events", resp.Header)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("events: Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != "event: map" || !sc.Scan() || !strings.HasPrefix(sc.Text(), `data: {"updated":`) {
		t.Errorf("events: first lines %q", sc.Text())
	}
	noRawMarkup(t, "events", sc.Bytes())
	resp.Body.Close()

	// Dead letters: the canary's reason, key and header JSON-escaped;
	// filters.
	code, _, b = call(t, "GET", api+"/deadletters", "")
	if code != http.StatusOK {
		t.Fatalf("deadletters: %d %s", code, b)
	}
	noRawMarkup(t, "deadletters", b)
	type letters struct {
		Letters []struct {
			Key, Reason string
			ErrorType   string `json:"error_type"`
			Headers     []struct{ Key, Value string }
		}
		Reasons       []struct{ Reason string }
		ErrorTypes    []struct{ ErrorType string } `json:"error_types"`
		ReplayAllowed bool                         `json:"replay_allowed"`
	}
	l := decode[letters](t, b)
	var gotCanary bool
	for _, lt := range l.Letters {
		if lt.Key == canary && strings.Contains(lt.Reason, canary) {
			for _, h := range lt.Headers {
				gotCanary = gotCanary || h.Key == "x-canary" && h.Value == canary
			}
		}
	}
	if !gotCanary || len(l.Letters) < 2 || l.ReplayAllowed || len(l.Reasons) < 2 || len(l.ErrorTypes) == 0 {
		t.Errorf("deadletters: canary %v, %+v", gotCanary, l)
	}
	_, _, b = call(t, "GET", api+"/deadletters?reason="+strings.ReplaceAll("<img", "<", "%3C")+"&error_type=permanent&limit=5", "")
	if l := decode[letters](t, b); len(l.Letters) != 1 || l.Letters[0].Key != canary {
		t.Errorf("filtered by reason: %+v", l)
	}
	if code, _, _ := call(t, "GET", api+"/deadletters?error_type=bogus", ""); code != http.StatusBadRequest {
		t.Errorf("bad error_type: %d", code)
	}

	// Read-only: replay refused, with or without the CSRF header.
	for h, want := range map[string]string{"": console.CSRFHeader, "1": "--allow-replay"} {
		code, _, b := call(t, "POST", api+"/deadletters/replay", `{}`, console.CSRFHeader, h)
		if code != http.StatusForbidden || !strings.Contains(string(b), want) {
			t.Errorf("replay with %s: %q on a read-only console: %d %s, want 403 naming %s", console.CSRFHeader, h, code, b, want)
		}
	}

	// Unknown API paths and pages: JSON 404 with the headers.
	for _, path := range []string{"/console/api/nope", "/nope", "/console/assets/"} {
		if code, _, b := call(t, "GET", srv.URL+path, ""); code != http.StatusNotFound || !strings.Contains(string(b), `"error"`) {
			t.Errorf("GET %s: %d %s", path, code, b)
		}
	}
}

// TestReplay: with replay allowed, the CSRF header is still required.
func TestReplay(t *testing.T) {
	e := newEnv(t)
	_, srv := e.console(t, console.Config{AllowReplay: true}, console.WithReplay(e.replay))
	url := srv.URL + "/api/deadletters/replay"
	if code, _, b := call(t, "POST", url, `{}`); code != http.StatusForbidden || !strings.Contains(string(b), console.CSRFHeader) {
		t.Errorf("replay without %s: %d %s", console.CSRFHeader, code, b)
	}
	if code, _, b := call(t, "POST", url, `{}`, console.CSRFHeader, "yes"); code != http.StatusForbidden {
		t.Errorf("replay with %s: yes: %d %s", console.CSRFHeader, code, b)
	}
	// The canary letter is waiting in the requests' dead-letter topic
	// (the poison request's joins it once retrieval has failed it).
	code, _, b := call(t, "POST", url, `{"reason":"<img","error_type":"permanent"}`, console.CSRFHeader, "1")
	if code != http.StatusOK {
		t.Fatalf("replay: %d %s", code, b)
	}
	if got := decode[struct{ Replayed, Failed int }](t, b); got.Replayed != 1 || got.Failed != 0 {
		t.Errorf("replay: %s, want the canary letter replayed", b)
	}
	if code, _, b := call(t, "GET", srv.URL+"/api/deadletters", ""); code != http.StatusOK || !strings.Contains(string(b), `"replay_allowed":true`) {
		t.Errorf("deadletters: %d %s", code, b)
	}
}

// TestForgedRequestsAreRefused: a cross-site form cannot search through
// the console (every POST needs CSRFHeader, checked before the console
// starts anything), and a page whose name was pointed at the console's
// address (DNS rebinding) can read nothing: only IP addresses, localhost
// names and Config.AllowedHosts are answered.
func TestForgedRequestsAreRefused(t *testing.T) {
	e := newEnv(t)
	con, srv := e.console(t, console.Config{AllowedHosts: []string{"Console.Example."}})
	for _, v := range []string{"", "0", "true"} {
		code, _, b := call(t, "POST", srv.URL+"/api/search", `{"query":"gzip"}`, console.CSRFHeader, v)
		if code != http.StatusForbidden || !strings.Contains(string(b), console.CSRFHeader) {
			t.Errorf("search with %s: %q: %d %s, want 403 naming the header", console.CSRFHeader, v, code, b)
		}
	}
	if con.Started() {
		t.Error("a refused search started the console's clients")
	}

	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for host, allowed := range map[string]bool{
		"127.0.0.1" + port:           true,
		"[::1]" + port:               true,
		"10.1.2.3":                   true,
		"localhost" + port:           true,
		"LOCALHOST.":                 true,
		"app.localhost" + port:       true,
		"console.example" + port:     true,
		"console.example.":           true,
		"attacker.example" + port:    false,
		"localhost.attacker.example": false,
		"127.0.0.1.nip.io" + port:    false,
		"console.example.evil":       false,
	} {
		for _, path := range []string{"/", "/console/", "/api/map", "/assets/app.js"} {
			req, err := http.NewRequest("GET", srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if refused := resp.StatusCode == http.StatusForbidden && strings.Contains(string(b), "--allowed-hosts"); refused == allowed {
				t.Errorf("GET %s with Host %q: %d %.120s; allowed %v", path, host, resp.StatusCode, b, allowed)
			}
		}
	}
}
