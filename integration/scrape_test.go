// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"go.yaml.in/yaml/v3"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
)

// scrapeProtocols is what the scraping Prometheus asks for: OpenMetrics
// first (the only text format with exemplars), the classic text format as
// the fallback.
var scrapeProtocols = []string{"OpenMetricsText1.0.0", "PrometheusText0.0.4"}

// startScrapingPrometheus starts Prometheus scraping each job's /metrics
// (job name → address) every second over OpenMetrics, with exemplar
// storage, and returns its URL.
func startScrapingPrometheus(t *testing.T, targets map[string]string) string {
	t.Helper()
	var jobs []map[string]any
	for _, job := range slices.Sorted(maps.Keys(targets)) {
		jobs = append(jobs, map[string]any{
			"job_name":         job,
			"scrape_protocols": scrapeProtocols,
			"static_configs":   []map[string]any{{"targets": []string{targets[job]}}},
		})
	}
	cfg := map[string]any{
		"global":         map[string]any{"scrape_interval": "1s", "scrape_timeout": "1s"},
		"scrape_configs": jobs,
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(freePort(t))
	run(t, prometheusImage,
		testcontainers.WithCmd("--config.file="+promConfigInPod, "--storage.tsdb.path=/prometheus",
			"--enable-feature=exemplar-storage", "--web.listen-address=127.0.0.1:"+port),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = []string{file + ":" + promConfigInPod + ":ro"}
		}),
	)
	promURL := "http://127.0.0.1:" + port
	waitHTTP(t, promURL+"/-/ready", 60*time.Second)
	return promURL
}

// TestScrapedMetricsFeedTheDashboard: a Prometheus that scrapes the
// services' --metrics-listen endpoints over OpenMetrics (no collector, no
// OTLP metrics) gets everything the Grafana dashboard queries, the
// pathway latency in buckets, kotel's byte counters under UCUM names, and
// exemplars whose trace ids Jaeger returns.
func TestScrapedMetricsFeedTheDashboard(t *testing.T) {
	start := time.Now()
	s := &stack{env: map[string]string{"KRETRIEVE_LAG_INTERVAL": "2s"}}
	s.startJaeger(t)
	s.startBroker(t)
	targets := map[string]string{}
	listen := func(job string) {
		targets[job] = "127.0.0.1:" + strconv.Itoa(freePort(t))
		s.env["KRETRIEVE_METRICS_LISTEN"] = targets[job]
	}
	listen("kretrieve-retrieval")
	s.startWorker(t, "retrieval")
	listen("kretrieve-enrichment")
	s.startWorker(t, "enrichment")
	listen("kretrieve-gateway")
	s.startGateway(t)
	promURL := startScrapingPrometheus(t, targets)
	t.Logf("stack and Prometheus up in %v", time.Since(start).Round(time.Millisecond))

	up := func() bool {
		return len(promQuery(t, promURL, `up == 1`)) == len(targets)
	}
	if !poll.WaitEvery(30*time.Second, time.Second, up) {
		t.Fatalf("Prometheus scrapes %v of %d targets: %v", promQuery(t, promURL, `up`), len(targets), targets)
	}

	traffic := make([]string, 60)
	for i := range traffic {
		traffic[i] = queries[i%len(queries)]
	}
	timedSearches(t, s.gatewayURL, traffic, 4, nil)
	poison(t, s.brokers, "scrape", 3) // the dead-letter panel's series
	timedSearches(t, s.gatewayURL, traffic, 4, nil)

	checkDashboardQueries(t, promURL)
	for query, want := range map[string]bool{
		// Buckets, not a native histogram's +Inf alone.
		`kretrieve_pathway_latency_seconds_bucket{le="0.05"}`: true,
		// kotel's byte counters, in UCUM's unit.
		`messaging_kafka_write_bytes_total`:      true,
		`messaging_kafka_read_bytes_count_total`: true,
		`{__name__=~".+_by_total"}`:              false,
	} {
		if got := len(promQuery(t, promURL, query)) > 0; got != want {
			t.Errorf("%s: series %v, want %v", query, got, want)
		}
	}
	checkScrapedExemplars(t, promURL, s.jaegerURL)
	t.Logf("TestScrapedMetricsFeedTheDashboard: %v in all", time.Since(start).Round(time.Millisecond))
}

// checkScrapedExemplars: the scraped pathway and processing histograms
// carry exemplars in Prometheus, and every exemplar's trace_id (the
// services sample every trace) names a trace Jaeger returns.
func checkScrapedExemplars(t *testing.T, promURL, jaegerURL string) {
	t.Helper()
	ids := map[string][]string{} // metric → trace ids
	for _, metric := range []string{"kretrieve_pathway_latency_seconds_bucket", "messaging_process_duration_seconds_bucket"} {
		r := queryExemplars(t, promURL, metric)
		for _, series := range r.Data {
			for _, ex := range series.Exemplars {
				if id := ex.Labels["trace_id"]; len(id) == 32 {
					ids[metric] = append(ids[metric], id)
				} else {
					t.Errorf("%s exemplar %v of %v: no trace_id", metric, ex.Labels, series.SeriesLabels)
				}
			}
		}
		if len(ids[metric]) == 0 {
			t.Errorf("no exemplar on %s: the OpenMetrics scrape carried none", metric)
		}
	}
	all := slices.Compact(slices.Sorted(slices.Values(slices.Concat(ids["kretrieve_pathway_latency_seconds_bucket"], ids["messaging_process_duration_seconds_bucket"]))))
	missing := waitForTraces(all, 30*time.Second, func(id string) bool { return rawTrace(t, jaegerURL, id) != "" })
	t.Logf("exemplars: %d on the pathway latency, %d on processing; %d distinct traces, %d not in Jaeger",
		len(ids["kretrieve_pathway_latency_seconds_bucket"]), len(ids["messaging_process_duration_seconds_bucket"]), len(all), len(missing))
	if len(missing) > 0 {
		t.Errorf("exemplars name traces Jaeger does not return: %v", missing)
	}
}
