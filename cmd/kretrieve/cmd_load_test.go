// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/producer"
)

// TestLoadCommand drives worker commands with the load command, closed and
// open loop, and checks the report.
func TestLoadCommand(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t)})
	startCommands(t, env, "retrieval", "enrichment")
	spansFile := filepath.Join(t.TempDir(), "spans.jsonl")
	for _, args := range [][]string{
		{"load", "--requests", "200", "--in-flight", "16", "--json", "--spans-file", spansFile, "--spans-file-requests", "5"},
		{"load", "--requests", "100", "--rate", "200", "--json"},
	} {
		r := runLoadJSON(t, env, args...)
		want := int64(200)
		if args[2] == "100" {
			want = 100
		}
		if r.Sent != want || r.Completed != want || r.Failed+r.TimedOut != 0 || r.ThroughputPS <= 0 || !strings.HasPrefix(r.Target, "kafka ") {
			t.Fatalf("%v: report %+v", args, r)
		}
		if r.EndToEndMS.P50 <= 0 || r.EndToEndMS.P999 < r.EndToEndMS.P50 || len(r.Stages) != 4 || r.Stages["retrieval"].P50 <= 0 {
			t.Fatalf("%v: latencies %+v %+v", args, r.EndToEndMS, r.Stages)
		}
		if r.DroppedSpans != 0 || r.PeakLag < 0 || len(r.ErrorsByStatus) != 0 {
			t.Fatalf("%v: dropped %d peak lag %d errors %v", args, r.DroppedSpans, r.PeakLag, r.ErrorsByStatus)
		}
		// This process's spans of the slowest request: the root, its send,
		// and the result's wait and process (the workers' are elsewhere).
		checkSlowest(t, r, "request", "send retrieval.requests", "wait retrieval.results", "process retrieval.results")
	}
	traces := readSpansFile(t, spansFile)
	if len(traces) != 5 {
		t.Fatalf("spans file holds %d traces, want 5", len(traces))
	}
}

// TestLoadThroughGateway drives a gateway command over HTTP, closed and open
// loop, and a gateway without workers whose every answer is a 504.
func TestLoadThroughGateway(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	index := testIndex(t)
	addr, stalled := freeAddr(t), freeAddr(t)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": index, "KRETRIEVE_HTTP_LISTEN": addr})
	startCommands(t, env, "retrieval", "enrichment", "gateway")
	// A second gateway on topics no worker reads: every search times out.
	stalledEnv := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_HTTP_LISTEN": stalled, "KRETRIEVE_TIMEOUT": "200ms",
		"KRETRIEVE_TOPIC_REQUESTS": "stalled.requests", "KRETRIEVE_TOPIC_CANDIDATES": "stalled.candidates", "KRETRIEVE_TOPIC_RESULTS": "stalled.results"})
	startCommands(t, stalledEnv, "gateway")
	waitReady(t, addr)
	waitReady(t, stalled)

	spansFile := filepath.Join(t.TempDir(), "spans.jsonl")
	for _, args := range [][]string{
		{"load", "--gateway-url", "http://" + addr + "/", "--requests", "120", "--in-flight", "8", "--json", "--spans-file", spansFile},
		{"load", "--gateway-url", "http://" + addr, "--requests", "60", "--rate", "150", "--json"},
	} {
		r := runLoadJSON(t, mapEnv(nil), args...)
		want := int64(120)
		if args[4] == "60" {
			want = 60
		}
		if r.Sent != want || r.Completed != want || r.Failed+r.TimedOut+r.TransportErrors != 0 || len(r.ErrorsByStatus) != 0 || r.Target != "gateway "+args[2] {
			t.Fatalf("%v: report %+v", args, r)
		}
		if r.EndToEndMS.P50 <= 0 || r.EndToEndMS.P999 < r.EndToEndMS.P50 || r.Stages["retrieval"].P50 <= 0 || r.Stages["enrichment_queue"].Max <= 0 {
			t.Fatalf("%v: latencies %+v %+v", args, r.EndToEndMS, r.Stages)
		}
		// The root and its HTTP client span, whose context the gateway continued.
		checkSlowest(t, r, "request", "HTTP POST")
	}
	if traces := readSpansFile(t, spansFile); len(traces) != 100 || len(traces[0].Spans) != 2 {
		t.Fatalf("spans file: %d traces (want 100, the default), the first with %d spans", len(traces), len(traces[0].Spans))
	}

	// Non-2xx answers are errors, counted by status: 504 from the stalled
	// gateway (timed out), 404 from a path the gateway does not serve.
	r := runLoadJSON(t, mapEnv(nil), "load", "--gateway-url", "http://"+stalled, "--requests", "6", "--in-flight", "3", "--json", "--max-error-rate", "1")
	if r.Sent != 6 || r.Completed != 0 || r.TimedOut != 6 || r.ErrorsByStatus[504] != 6 || r.Slowest != nil {
		t.Fatalf("stalled gateway: %+v", r)
	}
	r = runLoadJSON(t, mapEnv(nil), "load", "--gateway-url", "http://"+addr+"/nowhere", "--requests", "4", "--json", "--max-error-rate", "1")
	if r.Completed != 0 || r.Failed != 4 || r.ErrorsByStatus[404] != 4 || r.TimedOut != 0 {
		t.Fatalf("404s: %+v", r)
	}
	// Every request failing fails the command, after the report, with
	// one line saying why (--max-error-rate defaults to 0); the progress
	// line counts the failures apart from the completed.
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"load", "--gateway-url", "http://" + stalled, "--requests", "2"}, mapEnv(nil), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "2 of 2 requests failed or timed out (100.00%), above --max-error-rate 0") {
		t.Fatalf("all requests failed: err %v", err)
	}
	if !strings.Contains(stderr.String(), "sent 2 completed 0 failed 2 ") {
		t.Fatalf("progress:\n%s", stderr.String())
	}
	if !regexp.MustCompile(`\nhttp errors +504: 2\n`).MatchString(stdout.String()) || strings.Contains(stdout.String(), "peak lag") {
		t.Fatalf("text report:\n%s", stdout.String())
	}
	if _, err := loadLoadConfig([]string{"--gateway-url", "localhost:8080"}, mapEnv(nil), &stderr); err == nil || !strings.Contains(err.Error(), "gateway-url") {
		t.Fatalf("a URL without scheme: %v", err)
	}
}

// TestLoadSweep sweeps two rates through Kafka: a row per rate, JSON and
// text, and an SVG curve whose points are the rows.
func TestLoadSweep(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t),
		"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01"})
	startCommands(t, env, "retrieval", "enrichment")
	curve := filepath.Join(t.TempDir(), "curve.svg")
	r := runLoadJSON(t, env, "load", "--sweep", "50,100", "--requests", "40", "--json", "--curve", curve)
	if len(r.Sweep) != 2 || r.WarmupRequests != 40 || r.Sent != 80 || r.Completed != 80 || !strings.HasPrefix(r.Mode, "sweep") {
		t.Fatalf("report %+v", r)
	}
	for i, s := range r.Sweep {
		if s.OfferedPS != []float64{50, 100}[i] || s.Sent != 40 || s.Completed != 40 || s.Errors != 0 ||
			s.AchievedPS < s.OfferedPS/2 || s.AchievedPS > s.OfferedPS*1.1 || s.EndToEndMS.P50 <= 0 || s.EndToEndMS.P999 < s.EndToEndMS.P99 {
			t.Errorf("step %d: %+v", i, s)
		}
	}

	data, err := os.ReadFile(curve)
	if err != nil {
		t.Fatal(err)
	}
	var svg struct {
		Texts []struct {
			Class string `xml:"class,attr"`
			Text  string `xml:",chardata"`
		} `xml:"text"`
		Series []struct {
			Percentile string `xml:"data-percentile,attr"`
			Points     []struct {
				Achieved float64 `xml:"data-achieved,attr"`
				MS       float64 `xml:"data-ms,attr"`
			} `xml:"circle"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(data, &svg); err != nil {
		t.Fatalf("curve: %v", err)
	}
	title := ""
	for _, tx := range svg.Texts {
		if tx.Class == "title" {
			title = tx.Text
		}
	}
	if title != "kretrieve load, latency under load: Kafka, traced 1% (parentbased_traceidratio)" {
		t.Errorf("title %q", title)
	}
	percentiles := 0
	for _, g := range svg.Series {
		if g.Percentile == "" {
			continue
		}
		percentiles++
		if len(g.Points) != 2 {
			t.Fatalf("%s: %d points", g.Percentile, len(g.Points))
		}
		for i, p := range g.Points {
			step := r.Sweep[i]
			want := map[string]float64{"p50": step.EndToEndMS.P50, "p99": step.EndToEndMS.P99, "p99.9": step.EndToEndMS.P999}[g.Percentile]
			if math.Abs(p.Achieved-step.AchievedPS) > 1e-3*step.AchievedPS || math.Abs(p.MS-want) > 1e-3*want {
				t.Errorf("%s point %d: %+v, step %+v", g.Percentile, i, p, step)
			}
		}
	}
	if percentiles != 3 {
		t.Errorf("%d percentile series, want 3", percentiles)
	}

	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"load", "--sweep", "100,200", "--requests", "10"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !regexp.MustCompile(`rate_offered +rate_achieved +p50 ms +p99 ms +p99.9 ms +errors\n +100 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0\n +200 +[0-9.]+( +[0-9.]+){3} +0\n`).MatchString(stdout.String()) {
		t.Errorf("text report:\n%s", stdout.String())
	}

	for args, want := range map[string]string{
		"--sweep 100,x":                       "not a positive rate",
		"--sweep 100,0":                       "not a positive rate",
		"--sweep 100 --rate 10":               "not both",
		"--curve c.svg":                       "needs --sweep",
		"--max-error-rate 1.5":                "max-error-rate: must be between 0 and 1",
		"--max-error-rate x":                  "invalid argument",
		"--sweep 10 --curve - --spans-file -": "--curve, --spans-file: only one output can be - (stdout)",
		"--sweep 10 --requests 0":             "give --requests or --duration",
	} {
		if _, err := loadLoadConfig(strings.Fields(args), mapEnv(nil), &stderr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", args, err, want)
		}
	}
}

func runLoadJSON(t *testing.T, env func(string) string, args ...string) loadReport {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), args, env, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	var r loadReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stdout.String())
	}
	return r
}

// checkSlowest checks that the report's slowest request is its end-to-end
// maximum and holds the spans named, all of its trace.
func checkSlowest(t *testing.T, r loadReport, names ...string) {
	t.Helper()
	s := r.Slowest
	if s == nil || len(s.TraceID) != 32 || r.UntrackedTraces != 0 {
		t.Fatalf("slowest %+v untracked %d", s, r.UntrackedTraces)
	}
	// The root span and load's own timer differ by microseconds.
	if s.DurationMS > r.EndToEndMS.Max*1.01+1 || s.DurationMS < r.EndToEndMS.Max*0.99-1 {
		t.Fatalf("slowest %.3f ms, end-to-end %+v", s.DurationMS, r.EndToEndMS)
	}
	var got []string
	for _, sp := range s.Spans {
		if sp.TraceID != s.TraceID {
			t.Fatalf("span %s of trace %s in %s", sp.Name, sp.TraceID, s.TraceID)
		}
		got = append(got, sp.Name)
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
		t.Fatalf("slowest spans %v, want %v", got, want)
	}
}

func readSpansFile(t *testing.T, path string) []spans.Trace {
	t.Helper()
	return spans.GroupTraces(readSpans(t, path))
}

// readSpans reads the spans of a --spans-file.
func readSpans(t *testing.T, path string) []spans.Span {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read, err := spans.ReadSpans(f)
	if err != nil {
		t.Fatal(err)
	}
	return read
}

// TestLoadStopsWhenTheBrokerIsGone: an interrupted load whose broker has
// gone away stops within its bounds: the requests it could not deliver are
// given up after producer.CloseTimeout, not flushed forever. (It ran on for
// minutes after SIGTERM, stuck flushing to a broker that no longer
// existed.)
func TestLoadStopsWhenTheBrokerIsGone(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "error"})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	progress := &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		// No workers: the requests wait for results that never come, 5 new
		// ones a second.
		done <- run(ctx, []string{"load", "--requests", "100000", "--rate", "5", "--in-flight", "64", "--pathways-interval", "0"}, env, &bytes.Buffer{}, progress)
	}()
	if !poll.Wait(30*time.Second, func() bool { return strings.Contains(progress.String(), "sent 1 ") }) {
		t.Fatalf("load sent nothing:\n%s", progress.String())
	}
	b.Close()
	// The next progress line (5 s on) counts requests published since the
	// broker went: they cannot be delivered.
	later := regexp.MustCompile(`sent ([2-9]|[1-9][0-9]+) `)
	if !poll.Wait(30*time.Second, func() bool { return later.MatchString(progress.String()) }) {
		t.Fatalf("load sent nothing after its broker went:\n%s", progress.String())
	}
	cancel() // SIGTERM
	// The bound: the finish's flush (producer.CloseTimeout) and the
	// telemetry's shutdown (1 s), with room for a loaded machine.
	bound := producer.CloseTimeout + 20*time.Second
	select {
	case err := <-done:
		t.Logf("load ended: %v", err)
	case <-time.After(bound):
		t.Fatalf("load still running %v after it was interrupted with its broker gone:\n%s", bound, progress.String())
	}
}
