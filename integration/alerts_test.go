// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.yaml.in/yaml/v3"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/yamlfile"
	"github.com/kretrieve/kretrieve/messages"
)

// The shipped alerting rules and compose's Prometheus configuration.
const (
	alertRulesFile   = "../deploy/alerts/kretrieve.rules.yaml"
	promConfigFile   = "../deploy/compose/prometheus.yaml"
	promConfigInPod  = "/etc/prometheus/prometheus.yml"
	alertRulesInPod  = "/etc/prometheus/rules/kretrieve.rules.yaml"
	alertEvalEvery   = "1s" // the test's evaluation_interval (compose: 10s)
	alertForOverride = "5s" // every rule's `for:` in the test
)

// alertTestFiles writes compose's Prometheus configuration with a 1 s
// evaluation interval and the shipped rules with every `for:` shortened
// (the test's only changes: expressions, thresholds and labels are the
// shipped ones), readable by the image's user, and returns their binds at
// compose's paths.
func alertTestFiles(t *testing.T) []string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kretrieve-alerts-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	yamlfile.Read(t, promConfigFile, &cfg)
	global, _ := cfg["global"].(map[string]any)
	if global == nil {
		t.Fatalf("%s: no global section", promConfigFile)
	}
	global["evaluation_interval"] = alertEvalEvery
	rules, _ := cfg["rule_files"].([]any)
	if len(rules) == 0 {
		t.Fatalf("%s: no rule_files: compose's Prometheus would load no alerts", promConfigFile)
	}

	var rf map[string]any
	yamlfile.Read(t, alertRulesFile, &rf)
	groups, _ := rf["groups"].([]any)
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			if rule := r.(map[string]any); rule["for"] != nil {
				rule["for"] = alertForOverride
			}
		}
	}
	write := func(name string, v any) string {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return []string{
		write("prometheus.yml", cfg) + ":" + promConfigInPod + ":ro",
		write("kretrieve.rules.yaml", rf) + ":" + alertRulesInPod + ":ro",
	}
}

// startAlertingPrometheus starts Prometheus with compose's command and the
// files of alertTestFiles, and the collector with compose's configuration
// pushing metrics to it (traces go nowhere: the services export none). It
// returns Prometheus's address and the collector's OTLP/HTTP endpoint.
func startAlertingPrometheus(t *testing.T) (promURL, otlp string) {
	t.Helper()
	prom := composeServiceOf(t, "prometheus")
	promPort := freePort(t)
	promURL = "http://127.0.0.1:" + strconv.Itoa(promPort)
	run(t, prometheusImage,
		testcontainers.WithCmd(append(slices.Clone(prom.Command), "--web.listen-address=127.0.0.1:"+strconv.Itoa(promPort))...),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = alertTestFiles(t)
		}),
	)
	waitHTTP(t, promURL+"/-/ready", 60*time.Second)

	col := composeServiceOf(t, "otel-collector")
	httpPort, nowhere := freePort(t), "127.0.0.1:"+strconv.Itoa(freePort(t))
	run(t, otelcolImage,
		testcontainers.WithCmd(col.Command...),
		testcontainers.WithEnv(map[string]string{
			"OTLP_GRPC_LISTEN":          "127.0.0.1:" + strconv.Itoa(freePort(t)),
			"OTLP_HTTP_LISTEN":          "127.0.0.1:" + strconv.Itoa(httpPort),
			"JAEGER_OTLP_GRPC_ENDPOINT": nowhere,
			"TEMPO_OTLP_GRPC_ENDPOINT":  nowhere,
			"PROMETHEUS_OTLP_ENDPOINT":  promURL + "/api/v1/otlp",
		}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = col.binds(t)
			hc.Memory = col.memLimit(t)
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("Everything is ready").WithStartupTimeout(60*time.Second)),
	)
	return promURL, "http://127.0.0.1:" + strconv.Itoa(httpPort)
}

// alertState returns the state ("pending", "firing") of the alert name
// whose labels include match, "" when Prometheus has no such alert.
func alertState(t *testing.T, prom, name string, match map[string]string) string {
	t.Helper()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	promGet(t, prom, "/api/v1/alerts", &r)
	if r.Status != "success" {
		t.Fatalf("prometheus /api/v1/alerts: status %q", r.Status)
	}
	for _, a := range r.Data.Alerts {
		ok := a.Labels["alertname"] == name
		for k, v := range match {
			ok = ok && a.Labels[k] == v
		}
		if ok {
			return a.State
		}
	}
	return ""
}

// steadyRequests publishes a search request to the requests topic every
// interval until ctx ends, as a producer outside kretrieve would.
func steadyRequests(ctx context.Context, t *testing.T, brokers string, interval time.Duration) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; ; i++ {
		b, err := messages.EncodeRequest(messages.Request{RequestID: fmt.Sprintf("alert-%d", i), Query: "parse a URL query string", TopK: 5})
		if err != nil {
			t.Error(err)
			return
		}
		cl.Produce(ctx, &kgo.Record{Topic: messages.DefaultRequestsTopic, Value: b}, nil)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// startAlertedPipeline starts Prometheus with the shipped rules, the
// collector, the broker with the documents, a retrieval and an enrichment
// worker and `kretrieve lag --watch` for both groups, all exporting
// metrics every second with compose's explicit buckets (the latency SLO
// reads le="1") and no traces or logs. It returns Prometheus's address,
// the stack and the retrieval worker's container.
func startAlertedPipeline(t *testing.T) (string, *stack, *testcontainers.DockerContainer) {
	t.Helper()
	promURL, otlp := startAlertingPrometheus(t)
	const buckets = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
	s := &stack{otlp: otlp, env: map[string]string{
		buckets:                       composeServiceOf(t, "gateway").Environment[buckets],
		"OTEL_METRICS_EXPORTER":       "otlp",
		"OTEL_METRIC_EXPORT_INTERVAL": "1000",
		"OTEL_TRACES_EXPORTER":        "none",
		"OTEL_LOGS_EXPORTER":          "none",
		"KRETRIEVE_LAG_INTERVAL":      "1s",
		"KRETRIEVE_PATHWAYS_INTERVAL": "1s",
	}}
	if s.env[buckets] == "" {
		t.Fatalf("compose's gateway sets no %s", buckets)
	}
	s.startBroker(t)
	retrieval := s.startWorker(t, "retrieval")
	s.startWorker(t, "enrichment")
	run(t, kretrieveImage,
		testcontainers.WithCmd("lag", "--watch", "1s", "--groups", "retrieval,enrichment", "--indexes=false", "--json"),
		testcontainers.WithEnv(s.kretrieveEnv("kretrieve-lag")),
		testcontainers.WithWaitStrategy(wait.ForLog(`"group"`).WithStartupTimeout(60*time.Second)),
	)
	// The console exports kretrieve.requests.unfinished, judging cohorts
	// 5 s after they end (3 × the 1 s pathways interval and more).
	run(t, kretrieveImage,
		testcontainers.WithCmd("console", "--listen", "127.0.0.1:"+strconv.Itoa(freePort(t)), "--unfinished-after", "5s"),
		testcontainers.WithEnv(s.kretrieveEnv("kretrieve-console")),
		testcontainers.WithWaitStrategy(wait.ForLog("console: http://").WithStartupTimeout(60*time.Second)),
	)
	return promURL, s, retrieval
}

// TestAlertFiresOnStalledStage fires shipped alerts for real: the real
// Prometheus evaluates deploy/alerts/kretrieve.rules.yaml (every `for:`
// 5 s, evaluation every second), fed through compose's collector by the
// workers, by `kretrieve lag --watch` (the lag exporter that runs apart
// from the workers) and by `kretrieve console` (the unfinished requests).
// Under steady load the retrieval worker is paused:
// KretrieveConsumerLagHigh{messaging_consumer_group_name="retrieval"} must
// go to firing in /api/v1/alerts, and, for the searches sent through the
// gateway meanwhile,
// KretrieveRequestsUnfinished{kretrieve_pathway_edge="retrieval.requests →
// retrieval"}; once the worker resumes and drains, both must resolve
// (leave the list).
func TestAlertFiresOnStalledStage(t *testing.T) {
	promURL, s, retrieval := startAlertedPipeline(t)

	ctx, stop := context.WithCancel(t.Context())
	loadDone := make(chan struct{})
	go func() { defer close(loadDone); steadyRequests(ctx, t, s.brokers, 100*time.Millisecond) }()
	defer func() { stop(); <-loadDone }()

	group := map[string]string{"messaging_consumer_group_name": "retrieval"}
	const alert = "KretrieveConsumerLagHigh"
	// The pipeline keeps up: the retrieval worker has joined its group and
	// processes requests (a worker paused before it joined would leave a
	// group without commits), the lag watcher's measurement of the group
	// reaches Prometheus, and no alert is active.
	poll.Until(t, 120*time.Second, func() bool {
		return len(promQuery(t, promURL, `sum(messaging_client_consumed_messages_total{messaging_consumer_group_name="retrieval"}) > 20`)) > 0 &&
			len(promQuery(t, promURL, `kretrieve_consumer_lag_seconds{job="kretrieve-lag", messaging_consumer_group_name="retrieval"}`)) > 0
	}, "the retrieval worker's consumption or the group's lag never reached Prometheus")
	if st := alertState(t, promURL, alert, group); st != "" {
		t.Fatalf("%s is %s before any stall", alert, st)
	}
	checkSLOAndWindows(t, promURL, s)

	unpause := dockerPause(t, retrieval)
	paused := time.Now()
	t.Logf("retrieval worker paused at %s", paused.Format(time.TimeOnly))
	resumed := false
	defer func() {
		if !resumed {
			unpause()
		}
	}()
	// Searches through the gateway while the worker is paused: they enter
	// the pipeline (the gateway counts them by origin time) and wait at
	// the paused stage's edge until it resumes.
	// Their answers (504 while the worker is paused) are not the point.
	searched := make(chan struct{})
	go func() {
		defer close(searched)
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				began := time.Now()
				resp, err := http.Post(s.gatewayURL+"/v1/search", "application/json", strings.NewReader(fmt.Sprintf(`{"query":"gzip %d"}`, i)))
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					t.Logf("search %d: %d after %v: %.200s", i, resp.StatusCode, time.Since(began), b)
				} else {
					t.Logf("search %d: %v", i, err)
				}
			})
		}
		wg.Wait()
	}()
	defer func() { <-searched }()
	var pendingAt time.Duration
	lastLog := time.Now()
	poll.Until(t, 120*time.Second, func() bool {
		st := alertState(t, promURL, alert, group)
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			t.Logf("%.0fs after the pause: %s %q, retrieval lag %s s", time.Since(paused).Seconds(), alert, st,
				lagValues(promQuery(t, promURL, `max(kretrieve_consumer_lag_seconds{messaging_consumer_group_name="retrieval"})`)))
		}
		if st == "pending" && pendingAt == 0 {
			pendingAt = time.Since(paused)
		}
		return st == "firing"
	}, "%s never fired within 120 s of pausing the retrieval worker", alert)
	firedAfter := time.Since(paused)
	lagAtFire := promQuery(t, promURL, `max(kretrieve_consumer_lag_seconds{messaging_consumer_group_name="retrieval"})`)
	// Completeness: the searches that entered wait at the paused stage's
	// edge, as the console's gauge says and its alert fires.
	const unfinished = "KretrieveRequestsUnfinished"
	edge := map[string]string{"kretrieve_pathway_edge": "retrieval.requests → retrieval"}
	poll.Until(t, 60*time.Second, func() bool { return alertState(t, promURL, unfinished, edge) == "firing" },
		"%s{kretrieve_pathway_edge=%q} never fired while the retrieval worker was paused; kretrieve_requests_unfinished: %s",
		unfinished, edge["kretrieve_pathway_edge"], lazyQuery{t, promURL, `kretrieve_requests_unfinished`})
	unfinishedFired := time.Since(paused)
	unfinishedAt := lagValues(promQuery(t, promURL, `sum(kretrieve_requests_unfinished)`))

	unpause()
	resumed = true
	resumedAt := time.Now()
	poll.Until(t, 90*time.Second, func() bool { return alertState(t, promURL, alert, group) == "" },
		"%s still active 90 s after the retrieval worker resumed", alert)
	poll.Until(t, 90*time.Second, func() bool { return alertState(t, promURL, unfinished, nil) == "" },
		"%s still active 90 s after the retrieval worker resumed", unfinished)
	t.Logf("%s: firing %.1fs after the pause with %s requests unfinished at %s; resolved %.1fs after the worker resumed",
		unfinished, unfinishedFired.Seconds(), unfinishedAt, edge["kretrieve_pathway_edge"], time.Since(resumedAt).Seconds())
	t.Logf("%s: pending %.1fs and firing %.1fs after the pause (lag then %v s; threshold 30 s, for: %s, evaluation every %s); resolved %.1fs after the worker resumed",
		alert, pendingAt.Seconds(), firedAfter.Seconds(), lagValues(lagAtFire), alertForOverride, alertEvalEvery, time.Since(resumedAt).Seconds())
	if other := alertState(t, promURL, alert, map[string]string{"messaging_consumer_group_name": "enrichment"}); other == "firing" {
		t.Errorf("%s fired for enrichment, whose worker never stalled", alert)
	}
}

// checkSLOAndWindows checks the series names two other rules read, for
// real: the latency SLO's recording rule has a value once requests are
// answered through the gateway (the pathway histogram's origin measure at
// retrieval.results → kretrieve-gateway, bucket le="1"), and every
// service counts the pathway windows it published, with
// KretrievePathwaysNotPublished quiet.
func checkSLOAndWindows(t *testing.T, promURL string, s *stack) {
	t.Helper()
	s.startGateway(t)
	queries := make([]string, 20)
	for i := range queries {
		queries[i] = fmt.Sprintf("parse a URL query string %d", i)
	}
	timedSearches(t, s.gatewayURL, queries, 4, nil)
	const slo = "kretrieve:request_latency_slo:error_ratio_rate5m"
	var ratio string
	if !poll.Wait(60*time.Second, func() bool {
		ratio = lagValues(promQuery(t, promURL, slo+" >= 0 <= 1"))
		return ratio != ""
	}) {
		var series []string
		for _, r := range promQuery(t, promURL, `count by (__name__, kretrieve_pathway_edge, kretrieve_pathway_direction, kretrieve_pathway_measure, le) ({__name__=~"kretrieve_pathway_latency.*", kretrieve_pathway_measure="origin", le=~"|1.*"})`) {
			series = append(series, fmt.Sprint(r.Metric))
		}
		t.Fatalf("%s has no value after 20 searches through the gateway; origin series: %s", slo, strings.Join(series, "\n"))
	}
	var jobs []string
	poll.Until(t, 60*time.Second, func() bool {
		jobs = jobs[:0]
		for _, r := range promQuery(t, promURL, `sum by (job) (kretrieve_pathways_windows_total{error_type=""}) > 0`) {
			jobs = append(jobs, r.Metric["job"])
		}
		slices.Sort(jobs)
		return slices.Equal(jobs, []string{"kretrieve-enrichment", "kretrieve-gateway", "kretrieve-retrieval"})
	}, "services counting published pathway windows: %v", &jobs)
	if st := alertState(t, promURL, "KretrievePathwaysNotPublished", nil); st != "" {
		t.Errorf("KretrievePathwaysNotPublished is %s while every service publishes", st)
	}
	t.Logf("%s = %s after 20 searches; published pathway windows counted by %v", slo, ratio, jobs)
}

// lazyQuery formats a query's values when a failure message is printed.
type lazyQuery struct {
	t           *testing.T
	prom, query string
}

func (q lazyQuery) String() string {
	var out []string
	for _, r := range promQuery(q.t, q.prom, q.query) {
		out = append(out, fmt.Sprint(r.Metric, r.Value))
	}
	return strings.Join(out, "; ")
}

func lagValues(r []struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}) string {
	var out []string
	for _, v := range r {
		if len(v.Value) == 2 {
			out = append(out, fmt.Sprint(v.Value[1]))
		}
	}
	return strings.Join(out, ",")
}
