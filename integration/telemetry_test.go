// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.yaml.in/yaml/v3"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
)

// The telemetry images: built by `make otelcol-image` (the Collector Builder,
// tools/otelcol/manifest.yaml) and `make prometheus-image` (the Prometheus
// Go module), or upstream's images of the same versions.
var (
	otelcolImage    = image("OTELCOL_IMAGE", "kretrieve/otelcol:local")
	prometheusImage = image("PROMETHEUS_IMAGE", "kretrieve/prometheus:local")
)

// telemetryPath is compose's telemetry path, started the way compose.yaml
// starts it (its commands, its configuration files unchanged, the
// collector's memory limit), on the host network: only the addresses differ,
// set through the variables the collector's configuration reads.
type telemetryPath struct {
	jaeger    jaegerInstance // compose's jaeger
	tempo     jaegerInstance // in Tempo's place: its module is not served, no image can be built
	promURL   string
	otlpHTTP  string // the collector's OTLP/HTTP receiver, for the services
	collector *testcontainers.DockerContainer
}

func startTelemetryPath(t *testing.T) *telemetryPath {
	t.Helper()
	tp := &telemetryPath{jaeger: startJaegerInstance(t), tempo: startJaegerInstance(t)}

	prom := composeServiceOf(t, "prometheus")
	promPort := freePort(t)
	tp.promURL = "http://127.0.0.1:" + strconv.Itoa(promPort)
	run(t, prometheusImage,
		testcontainers.WithCmd(append(slices.Clone(prom.Command), "--web.listen-address=127.0.0.1:"+strconv.Itoa(promPort))...),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = prom.binds(t)
		}),
	)
	waitHTTP(t, tp.promURL+"/-/ready", 60*time.Second)

	col := composeServiceOf(t, "otel-collector")
	httpPort := freePort(t)
	tp.otlpHTTP = "http://127.0.0.1:" + strconv.Itoa(httpPort)
	tp.collector = run(t, otelcolImage,
		testcontainers.WithCmd(col.Command...),
		testcontainers.WithEnv(map[string]string{
			"OTLP_GRPC_LISTEN":          "127.0.0.1:" + strconv.Itoa(freePort(t)),
			"OTLP_HTTP_LISTEN":          "127.0.0.1:" + strconv.Itoa(httpPort),
			"JAEGER_OTLP_GRPC_ENDPOINT": "127.0.0.1:" + strconv.Itoa(tp.jaeger.otlpGRPC),
			"TEMPO_OTLP_GRPC_ENDPOINT":  "127.0.0.1:" + strconv.Itoa(tp.tempo.otlpGRPC),
			"PROMETHEUS_OTLP_ENDPOINT":  tp.promURL + "/api/v1/otlp",
		}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = col.binds(t)
			hc.Memory = col.memLimit(t)
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("Everything is ready").WithStartupTimeout(60*time.Second)),
	)
	return tp
}

// samplingPolicy is what the collector's configuration promises.
type samplingPolicy struct {
	latency    time.Duration // every trace longer is kept
	percentage float64       // of the others
}

// collectorSampling reads the tail_sampling policies of compose's collector
// configuration.
func collectorSampling(t *testing.T) samplingPolicy {
	t.Helper()
	b, err := os.ReadFile("../deploy/compose/otel-collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Processors struct {
			TailSampling struct {
				Policies []struct {
					Type    string
					Latency struct {
						ThresholdMS int `yaml:"threshold_ms"`
					}
					Probabilistic struct {
						SamplingPercentage float64 `yaml:"sampling_percentage"`
					}
				}
			} `yaml:"tail_sampling"`
		}
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var p samplingPolicy
	for _, pol := range c.Processors.TailSampling.Policies {
		switch pol.Type {
		case "latency":
			p.latency = time.Duration(pol.Latency.ThresholdMS) * time.Millisecond
		case "probabilistic":
			p.percentage = pol.Probabilistic.SamplingPercentage
		}
	}
	if p.latency == 0 || p.percentage == 0 {
		t.Fatalf("tail_sampling: no latency or probabilistic policy: %+v", c.Processors.TailSampling)
	}
	return p
}

// timedSearch is one search through the gateway and how long it took.
type timedSearch struct {
	searchResult
	took time.Duration
}

// timedSearches sends the queries through the gateway, conc at a time; done,
// when not nil, counts the searches that have completed.
func timedSearches(t *testing.T, gateway string, queries []string, conc int, done *atomic.Int64) []timedSearch {
	t.Helper()
	out := make([]timedSearch, len(queries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for i, q := range queries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			out[i].searchResult = gatewaySearch(t, gateway, q)
			out[i].took = time.Since(start)
			if out[i].status != http.StatusOK || len(out[i].TraceID) != 32 {
				t.Errorf("search %q: status %d (%s), trace id %q", q, out[i].status, out[i].Error, out[i].TraceID)
			}
			if done != nil {
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return out
}

// dockerPause pauses a container (its process gets no CPU: records queue
// in Kafka) and returns the function that resumes it.
func dockerPause(t *testing.T, c *testcontainers.DockerContainer) (unpause func()) {
	t.Helper()
	if out, err := exec.Command("docker", "pause", c.GetContainerID()).CombinedOutput(); err != nil {
		t.Fatalf("docker pause: %v %s", err, out)
	}
	return func() {
		if out, err := exec.Command("docker", "unpause", c.GetContainerID()).CombinedOutput(); err != nil {
			t.Fatalf("docker unpause: %v %s", err, out)
		}
	}
}

// poison publishes n records that are not JSON to the requests topic, as a
// buggy producer would, and returns the trace ids of their dead letters
// (the traceparent of each dead-letter record, written by the worker that
// gave up: its trace has the failed process span).
func poison(t *testing.T, brokers, marker string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range n {
		r := &kgo.Record{Topic: messages.DefaultRequestsTopic, Value: fmt.Appendf(nil, `{"query": "%s-%d"`, marker, i)}
		if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return deadLetterTraces(t, brokers, marker, n)
}

// deadLetterTraces reads the requests' dead-letter topic until it has found
// n letters whose value holds marker, and returns their trace ids.
func deadLetterTraces(t *testing.T, brokers, marker string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers),
		kgo.ConsumeTopics(messages.DLQTopic(messages.DefaultRequestsTopic)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var traces []string
	for len(traces) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d of %d dead letters after 60 s", len(traces), n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if !strings.Contains(string(r.Value), marker) {
				return
			}
			var traceID string
			for _, h := range r.Headers {
				// version-traceid-spanid-flags; the last one is the
				// dead-letter send's.
				if parts := strings.Split(string(h.Value), "-"); h.Key == "traceparent" && len(parts) == 4 {
					traceID = parts[1]
				}
			}
			if traceID == "" {
				t.Errorf("dead letter %s has no traceparent: %v", r.Value, r.Headers)
				return
			}
			traces = append(traces, traceID)
		})
	}
	return traces
}

// rawTrace returns Jaeger's JSON for a trace, "" while Jaeger does not have
// it.
func rawTrace(t *testing.T, jaeger, traceID string) string {
	t.Helper()
	resp, err := httpClient.Get(jaeger + "/api/traces/" + traceID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return ""
	case http.StatusOK:
		return string(b)
	}
	t.Fatalf("jaeger %s: %s %s", traceID, resp.Status, b)
	return ""
}

// promQuery runs an instant PromQL query and returns its result vector.
func promQuery(t *testing.T, prom, query string) []struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
} {
	t.Helper()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	promGet(t, prom, "/api/v1/query?"+url.Values{"query": {query}}.Encode(), &r)
	if r.Status != "success" {
		t.Fatalf("prometheus %q: %s", query, r.Error)
	}
	return r.Data.Result
}

// promGet decodes a GET of the Prometheus HTTP API into v.
func promGet(t *testing.T, prom, path string, v any) {
	t.Helper()
	resp, err := httpClient.Get(prom + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("prometheus %s: %s %s", path, resp.Status, b)
	}
}

// binomialBounds returns the smallest lo and largest hi with
// P(X < lo) < alpha and P(X > hi) < alpha for X ~ Binomial(n, p).
func binomialBounds(n int, p, alpha float64) (lo, hi int) {
	pmf := func(k int) float64 {
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
		return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	for sum := 0.0; lo <= n; lo++ {
		if sum+pmf(lo) >= alpha {
			break
		}
		sum += pmf(lo)
	}
	hi = n
	for sum := 0.0; hi >= 0; hi-- {
		if sum+pmf(hi) >= alpha {
			break
		}
		sum += pmf(hi)
	}
	return lo, hi
}

// TestTelemetryPath runs compose's telemetry path for real: kretrieve's
// services → the collector built from tools/otelcol/manifest.yaml, running
// deploy/compose/otel-collector.yaml unchanged → Jaeger (and a second Jaeger
// where compose has Tempo) for traces and Prometheus, built from its module
// and running deploy/compose/prometheus.yaml, for metrics. It checks what
// the configuration promises: tail sampling keeps every error and every slow
// trace and the configured share of the rest, user data is masked, the
// collector survives a burst within compose's memory limit without losing a
// kept trace, every PromQL query of the Grafana dashboard has data, and
// exemplars lead to traces Jaeger has.
func TestTelemetryPath(t *testing.T) {
	policy := collectorSampling(t)
	tp := startTelemetryPath(t)

	// The services run with compose's telemetry settings (x-kretrieve-env),
	// but for the collector's address and a metric interval of 2 s instead
	// of 10 s, so that rates have points within the test's minute.
	env := map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "2000", "KRETRIEVE_RECORD_QUERY_TEXT": "true", "KRETRIEVE_LAG_INTERVAL": "2s"}
	for k, v := range composeServiceOf(t, "gateway").Environment {
		if strings.HasPrefix(k, "OTEL_") && k != "OTEL_EXPORTER_OTLP_ENDPOINT" && k != "OTEL_SERVICE_NAME" && k != "OTEL_METRIC_EXPORT_INTERVAL" {
			env[k] = v
		}
	}
	env["OTEL_METRICS_EXPORTER"] = "otlp"
	s := &stack{otlp: tp.otlpHTTP, env: env}
	s.startBroker(t)
	retrieval := s.startWorker(t, "retrieval")
	s.startWorker(t, "enrichment")
	s.startGateway(t)

	// Every query holds the canary: query text is recorded on spans
	// (--record-query-text) and must be masked by the collector.
	canary := "canary" + rand.Text()[:12]
	canaryQueries := func(n, from int) []string {
		qs := make([]string, n)
		for i := range qs {
			qs[i] = canary + " " + queries[(from+i)%len(queries)]
		}
		return qs
	}

	// Phase 1, the baseline: fast requests, of which tail sampling keeps
	// the configured share.
	baseline := timedSearches(t, s.gatewayURL, canaryQueries(600, 0), 4, nil)

	// Phase 2, slow requests: the retrieval worker is paused, so their
	// records wait in Kafka for over a second.
	var slow []timedSearch
	var wg sync.WaitGroup
	unpause := dockerPause(t, retrieval)
	wg.Go(func() { slow = timedSearches(t, s.gatewayURL, canaryQueries(12, 3), 12, nil) })
	time.Sleep(2500 * time.Millisecond) // the stall under test: records wait in Kafka
	unpause()
	wg.Wait()

	// Phase 3, a burst within compose's memory limit for the collector:
	// 2,000 requests as fast as 24 callers can send them, with poison
	// records (error traces) and a pause of the retrieval worker (slow
	// traces) inside it.
	burstStart := time.Now()
	var burst []timedSearch
	var burstDone atomic.Int64
	wg.Go(func() { burst = timedSearches(t, s.gatewayURL, canaryQueries(2000, 5), 24, &burstDone) })
	// A quarter into the burst, the poison lands inside it.
	if !poll.Wait(60*time.Second, func() bool { return burstDone.Load() >= 500 }) {
		t.Fatalf("the burst did not reach 500 searches in 60 s (%d)", burstDone.Load())
	}
	errorTraces := poison(t, s.brokers, canary, 10)
	unpause = dockerPause(t, retrieval)
	time.Sleep(2 * time.Second) // the stall under test
	unpause()
	wg.Wait()
	t.Logf("burst: 2000 requests in %v", time.Since(burstStart).Round(time.Millisecond))

	// Every trace over the latency threshold must be kept: the slow phase
	// and the burst's requests that waited out the pause. A request's trace
	// is at least as long as its root span, which is nearly all of its
	// latency; twice the threshold leaves room for the HTTP overhead.
	var slowTraces []string
	for _, r := range slices.Concat(slow, burst) {
		if r.took > 2*policy.latency {
			slowTraces = append(slowTraces, r.TraceID)
		}
	}
	for _, r := range slow {
		if r.took < 2*policy.latency {
			t.Fatalf("a request sent while the retrieval worker was paused took %v", r.took)
		}
	}
	t.Logf("kept by policy: %d slow traces, %d error traces", len(slowTraces), len(errorTraces))

	// Both trace stores get every kept trace, whole.
	const errorStatus = `"key":"otel.status_code","type":"string","value":"ERROR"`
	for _, store := range []struct {
		name string
		url  string
	}{{"jaeger", tp.jaeger.queryURL}, {"tempo's place", tp.tempo.queryURL}} {
		missing := waitForTraces(slowTraces, 60*time.Second, func(id string) bool {
			return strings.Count(rawTrace(t, store.url, id), `"spanID"`) >= spansPerRequest
		})
		if len(missing) > 0 {
			t.Errorf("%s: %d of %d slow traces missing or incomplete after 60 s: %v", store.name, len(missing), len(slowTraces), missing)
		}
		missing = waitForTraces(errorTraces, 30*time.Second, func(id string) bool {
			return strings.Contains(rawTrace(t, store.url, id), errorStatus)
		})
		if len(missing) > 0 {
			t.Errorf("%s: %d of %d error traces (dead letters) missing, or without their error span: %v", store.name, len(missing), len(errorTraces), missing)
		}
	}

	// The baseline's share. Its requests took well under the threshold;
	// none failed. The decisions are in: every kept trace above was
	// decided after the baseline's.
	var fast []string
	for _, r := range baseline {
		if r.took < policy.latency/2 {
			fast = append(fast, r.TraceID)
		}
	}
	if len(fast) < len(baseline)*9/10 {
		t.Fatalf("only %d of %d baseline requests took under %v", len(fast), len(baseline), policy.latency/2)
	}
	kept := 0
	for _, id := range fast {
		raw := rawTrace(t, tp.jaeger.queryURL, id)
		if raw == "" {
			continue
		}
		kept++
		if n := strings.Count(raw, `"spanID"`); n < spansPerRequest {
			t.Errorf("baseline trace %s kept with %d of %d spans: a trace is kept whole or not at all", id, n, spansPerRequest)
		}
		if tempo := rawTrace(t, tp.tempo.queryURL, id); tempo == "" {
			t.Errorf("baseline trace %s is in jaeger but not in tempo's place: the fan-out lost it", id)
		}
		checkRedacted(t, canary, id, raw)
	}
	lo, hi := binomialBounds(len(fast), policy.percentage/100, 1e-5)
	t.Logf("baseline: %d of %d fast traces kept (%.1f%%; configured %.0f%%, accepted %d..%d)",
		kept, len(fast), 100*float64(kept)/float64(len(fast)), policy.percentage, lo, hi)
	if kept < lo || kept > hi {
		t.Errorf("tail sampling kept %d of %d fast traces; at %.0f%% that is outside [%d, %d] (P < 1e-5 each side)",
			kept, len(fast), policy.percentage, lo, hi)
	}
	for _, id := range slowTraces {
		checkRedacted(t, canary, id, rawTrace(t, tp.jaeger.queryURL, id))
	}

	checkCollectorSurvived(t, tp)
	checkDashboardQueries(t, tp.promURL)
	checkPrometheusHasNoCanary(t, tp.promURL, canary)
	checkExemplars(t, tp, policy)
}

// waitForTraces polls until check holds for every trace id, or timeout;
// it returns the ids for which it never did.
func waitForTraces(ids []string, timeout time.Duration, check func(traceID string) bool) []string {
	pending := slices.Clone(ids)
	poll.WaitEvery(timeout, time.Second, func() bool {
		pending = slices.DeleteFunc(pending, check)
		return len(pending) == 0
	})
	return pending
}

// checkRedacted: the kept trace recorded the query text (the key is there)
// but the collector masked its value.
func checkRedacted(t *testing.T, canary, traceID, raw string) {
	t.Helper()
	if strings.Contains(raw, canary) {
		t.Errorf("trace %s: the canary query reached the trace store", traceID)
	}
	if !strings.Contains(raw, `"key":"kretrieve.query.text","type":"string","value":"****"`) {
		t.Errorf("trace %s: no masked kretrieve.query.text: the test would pass without redaction: %.300s", traceID, raw)
	}
}

// checkCollectorSurvived: after the burst the collector still runs, was
// neither killed for memory nor restarted, and its memory_limiter processor
// is in the running pipelines (the collector's own metrics say so).
func checkCollectorSurvived(t *testing.T, tp *telemetryPath) {
	t.Helper()
	st, err := tp.collector.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.OOMKilled || st.Restarting {
		t.Errorf("collector after the burst: running %v, OOM-killed %v, restarting %v", st.Running, st.OOMKilled, st.Restarting)
	}
	var limited []string
	poll.WaitEvery(60*time.Second, time.Second, func() bool {
		limited = nil
		for _, r := range promQuery(t, tp.promURL, `sum by (otel_signal) (otelcol_processor_incoming_items_total{processor="memory_limiter"})`) {
			limited = append(limited, r.Metric["otel_signal"])
		}
		return len(limited) == 3
	})
	if slices.Sort(limited); !slices.Equal(limited, []string{"logs", "metrics", "traces"}) {
		t.Errorf("memory_limiter counted items of %v, want logs, metrics and traces: it is not in every pipeline", limited)
	}
	rss := promQuery(t, tp.promURL, `max_over_time(otelcol_process_memory_rss_bytes[10m])`)
	if len(rss) == 0 {
		t.Fatal("no otelcol_process_memory_rss_bytes: the collector's own metrics do not reach Prometheus")
	}
	peak, _ := strconv.ParseFloat(rss[0].Value[1].(string), 64)
	t.Logf("collector: peak RSS %.0f MiB", peak/(1<<20))
}

// dashboardQueries returns every PromQL query of the compose Grafana
// dashboard, with the panels' titles, as Grafana sends them with its
// defaults: $__rate_interval becomes 1m (four metric intervals of 2 s would
// do; Grafana takes at least four scrape intervals) and a query variable
// ($job) its All value.
func dashboardQueries(t *testing.T) (exprs, titles []string) {
	t.Helper()
	b, err := os.ReadFile("../deploy/compose/grafana/dashboards/kretrieve.json")
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title      string `json:"title"`
		Datasource struct {
			Type string `json:"type"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"`
	}
	var dash struct {
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name, Type, AllValue string
			}
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	vars := []string{"$__rate_interval", "1m"}
	for _, v := range dash.Templating.List {
		if v.Type == "query" {
			if v.AllValue == "" {
				t.Fatalf("dashboard variable %s has no All value to query with", v.Name)
			}
			vars = append(vars, "${"+v.Name+"}", v.AllValue, "$"+v.Name, v.AllValue)
		}
	}
	substitute := strings.NewReplacer(vars...)
	var walk func([]json.RawMessage)
	walk = func(ps []json.RawMessage) {
		for _, raw := range ps {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			walk(p.Panels)
			if p.Datasource.Type != "prometheus" {
				continue
			}
			for _, tg := range p.Targets {
				exprs = append(exprs, substitute.Replace(tg.Expr))
				titles = append(titles, p.Title)
			}
		}
	}
	walk(dash.Panels)
	return exprs, titles
}

// checkDashboardQueries runs every PromQL query of the compose Grafana
// dashboard (dashboardQueries) against Prometheus: each must return series.
func checkDashboardQueries(t *testing.T, prom string) {
	t.Helper()
	exprs, titles := dashboardQueries(t)
	if len(exprs) < 10 {
		t.Fatalf("the dashboard has %d PromQL queries; the test expects the compose dashboard's", len(exprs))
	}
	empty := map[int]bool{}
	for i := range exprs {
		empty[i] = true
	}
	poll.WaitEvery(60*time.Second, time.Second, func() bool {
		for i := range empty {
			if len(promQuery(t, prom, exprs[i])) > 0 {
				delete(empty, i)
			}
		}
		return len(empty) == 0
	})
	for i := range exprs {
		if empty[i] {
			t.Errorf("dashboard panel %q: no series for %s", titles[i], exprs[i])
		}
	}
	t.Logf("dashboard: %d PromQL queries, each with series", len(exprs))
}

// checkPrometheusHasNoCanary: no label value in Prometheus holds the
// canary query text.
func checkPrometheusHasNoCanary(t *testing.T, prom, canary string) {
	t.Helper()
	var names struct{ Data []string }
	promGet(t, prom, "/api/v1/labels", &names)
	if !slices.Contains(names.Data, "messaging_destination_name") {
		t.Fatalf("Prometheus labels %v: kretrieve's metrics are missing, the check would be empty", names.Data)
	}
	for _, name := range names.Data {
		var values struct{ Data []string }
		promGet(t, prom, "/api/v1/label/"+url.PathEscape(name)+"/values", &values)
		for _, v := range values.Data {
			if strings.Contains(v, canary) {
				t.Errorf("Prometheus label %s=%q holds the canary query", name, v)
			}
		}
	}
}

// exemplarsAnswer is Prometheus's /api/v1/query_exemplars answer.
type exemplarsAnswer struct {
	Status string
	Error  string
	Data   []struct {
		SeriesLabels map[string]string `json:"seriesLabels"`
		Exemplars    []struct {
			Labels map[string]string `json:"labels"`
			Value  string            `json:"value"`
		} `json:"exemplars"`
	}
}

// queryExemplars asks Prometheus for the exemplars of metric over the last
// 15 minutes.
func queryExemplars(t *testing.T, promURL, metric string) exemplarsAnswer {
	t.Helper()
	var r exemplarsAnswer
	now := time.Now()
	promGet(t, promURL, "/api/v1/query_exemplars?"+url.Values{
		"query": {metric},
		"start": {strconv.FormatInt(now.Add(-15*time.Minute).Unix(), 10)},
		"end":   {strconv.FormatInt(now.Unix(), 10)},
	}.Encode(), &r)
	if r.Status != "success" {
		t.Fatalf("query_exemplars %s: %s", metric, r.Error)
	}
	return r
}

// checkExemplars: the pathway latency histogram's exemplars reach
// Prometheus, and every exemplar of a latency the tail sampler keeps (over
// twice its threshold) names a trace Jaeger returns.
func checkExemplars(t *testing.T, tp *telemetryPath, policy samplingPolicy) {
	t.Helper()
	r := queryExemplars(t, tp.promURL, "kretrieve_pathway_latency_seconds_bucket")
	total, slow, found := 0, 0, 0
	for _, series := range r.Data {
		for _, ex := range series.Exemplars {
			total++
			v, err := strconv.ParseFloat(ex.Value, 64)
			if err != nil {
				t.Fatalf("exemplar value %q: %v", ex.Value, err)
			}
			id := ex.Labels["trace_id"]
			if len(id) != 32 {
				t.Errorf("exemplar %v of %v: no trace_id", ex, series.SeriesLabels)
				continue
			}
			inJaeger := rawTrace(t, tp.jaeger.queryURL, id) != ""
			if inJaeger {
				found++
			}
			if v > 2*policy.latency.Seconds() {
				slow++
				if !inJaeger {
					t.Errorf("exemplar of %.2f s (%s) names trace %s, which Jaeger does not have", v, series.SeriesLabels["kretrieve_pathway_edge"], id)
				}
			}
		}
	}
	t.Logf("exemplars: %d on kretrieve_pathway_latency_seconds_bucket, %d of them slow; %d name traces Jaeger has", total, slow, found)
	if slow == 0 {
		t.Errorf("no exemplar over %v among %d: the slow requests' latencies carry none", 2*policy.latency, total)
	}
}
