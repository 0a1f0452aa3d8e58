package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/kafkatest"
	"github.com/kretrieve/kretrieve/runsummary"
)

// TestLoadCommand drives worker commands with the load command, closed and
// open loop, and checks the report.
func TestLoadCommand(t *testing.T) {
	b := kafkatest.NewBroker(t, 3)
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
	b := kafkatest.NewBroker(t, 3)
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
	r := runLoadJSON(t, mapEnv(nil), "load", "--gateway-url", "http://"+stalled, "--requests", "6", "--in-flight", "3", "--json")
	if r.Sent != 6 || r.Completed != 0 || r.TimedOut != 6 || r.ErrorsByStatus[504] != 6 || r.Slowest != nil {
		t.Fatalf("stalled gateway: %+v", r)
	}
	r = runLoadJSON(t, mapEnv(nil), "load", "--gateway-url", "http://"+addr+"/nowhere", "--requests", "4", "--json")
	if r.Completed != 0 || r.Failed != 4 || r.ErrorsByStatus[404] != 4 || r.TimedOut != 0 {
		t.Fatalf("404s: %+v", r)
	}
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"load", "--gateway-url", "http://" + stalled, "--requests", "2"}, mapEnv(nil), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\nhttp errors +504: 2\n`).MatchString(stdout.String()) || strings.Contains(stdout.String(), "peak lag") {
		t.Fatalf("text report:\n%s", stdout.String())
	}
	if _, err := loadLoadConfig([]string{"--gateway-url", "localhost:8080"}, mapEnv(nil), &stderr); err == nil || !strings.Contains(err.Error(), "gateway-url") {
		t.Fatalf("a URL without scheme: %v", err)
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

func readSpansFile(t *testing.T, path string) []runsummary.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, err := runsummary.ReadSpans(f)
	if err != nil {
		t.Fatal(err)
	}
	return runsummary.GroupTraces(spans)
}
