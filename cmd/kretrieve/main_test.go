// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/ops/spans"
)

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadWorkerConfig(t *testing.T) {
	env := mapEnv(map[string]string{
		"KRETRIEVE_BROKERS":        "k1:9092, k2:9092",
		"KRETRIEVE_CONCURRENCY":    "3",
		"KRETRIEVE_TOPIC_REQUESTS": "req",
		"KRETRIEVE_RETRY_BACKOFF":  "250ms",
	})
	cfg, err := loadWorkerConfig("retrieval", []string{"--concurrency", "9"}, env, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.brokers != "k1:9092, k2:9092" || cfg.topics.Requests != "req" || cfg.worker.RetryBackoff != 250*time.Millisecond {
		t.Fatalf("variables not applied: %+v", cfg)
	}
	if cfg.worker.Concurrency != 9 {
		t.Fatalf("flag did not override the variable: concurrency %d", cfg.worker.Concurrency)
	}
	if cfg.worker.Group != "retrieval" || cfg.topics.Results != "retrieval.results" {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad integer variable", map[string]string{"KRETRIEVE_CONCURRENCY": "many"}, nil, "KRETRIEVE_CONCURRENCY"},
		{"bad duration variable", map[string]string{"KRETRIEVE_RETRY_BACKOFF": "soon"}, nil, "KRETRIEVE_RETRY_BACKOFF"},
		{"duplicate topics", nil, []string{"--topic-candidates", "retrieval.requests"}, "topic"},
		{"no brokers", nil, []string{"--brokers", " , "}, "brokers"},
		{"bad partitions", nil, []string{"--partitions", "0"}, "partitions"},
		{"unknown flag", nil, []string{"--nope"}, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadWorkerConfig("enrichment", tt.args, mapEnv(tt.env), &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := loadProduceConfig(nil, mapEnv(nil), &bytes.Buffer{}); err == nil {
		t.Fatal("produce without queries accepted")
	}
	if _, err := loadProduceConfig([]string{"--top-k", "101", "q"}, mapEnv(nil), &bytes.Buffer{}); err == nil {
		t.Fatal("top-k 101 accepted")
	}
}

// TestDocsListEveryVariable keeps docs/configuration.md's table honest:
// it documents the variable of every flag of every command.
func TestDocsListEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	for _, c := range treeCommands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				asked[envName(f.Name)] = true
			}
		})
	}
	if len(asked) < 20 {
		t.Fatalf("only %d variables found", len(asked))
	}
	for k := range asked {
		if !regexp.MustCompile(`\b` + k + `\b`).Match(readme) {
			t.Errorf("docs/configuration.md does not document %s", k)
		}
	}
}

// testIndex builds a small on-disk index with the index command from a JSONL
// file (two bad lines among them, skipped) and returns its directory.
func testIndex(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "docs.jsonl")
	lines := []string{
		`{"id":"zip","title":"archive/zip","body":"Read and write ZIP archives.","url":"https://pkg.go.dev/archive/zip","metadata":{"team":"go"}}`,
		`{"id":"url","title":"net/url.ParseQuery","body":"ParseQuery parses the URL-encoded query string and returns a map."}`,
		`not json`,
		`{"id":"sha","title":"crypto/sha256.Sum256","body":"Sum256 returns the SHA256 checksum of the data."}`,
		`{"title":"no id"}`,
		`{"id":"gzip","title":"compress/gzip","body":"Reading and writing of gzip format compressed files."}`,
	}
	if err := os.WriteFile(jsonl, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index")
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"index", "--index", index, "--jsonl", jsonl}, mapEnv(nil), &stdout, &stderr); err != nil {
		t.Fatalf("index: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "indexed 4 documents") || !strings.Contains(stderr.String(), "line 3") || !strings.Contains(stderr.String(), "line 5") {
		t.Fatalf("index output:\n%s\n%s", stdout.String(), stderr.String())
	}
	err := run(t.Context(), []string{"index", "--index", filepath.Join(dir, "strict"), "--jsonl", jsonl, "--strict"}, mapEnv(nil), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("strict index of a file with bad lines: %v", err)
	}
	return index
}

func TestRunPrintsSummaryFromSpans(t *testing.T) {
	dir := t.TempDir()
	file, spansFile := filepath.Join(dir, "summary.json"), filepath.Join(dir, "spans.jsonl")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"run", "--requests", "60", "--summary-json", file, "--spans-file", spansFile, "--spans-file-requests", "60", "--log-level", "warn", "--index", testIndex(t)}, mapEnv(nil), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s runsummary.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Requests.Sent != 60 || s.Requests.Completed != 60 || s.EndToEndMS.Count != 60 || s.SpansDropped != 0 {
		t.Fatalf("summary %+v", s)
	}
	if len(s.Topics) != 3 {
		t.Fatalf("topics %+v", s.Topics)
	}
	for _, tp := range s.Topics {
		if tp.QueueWaitMS.Count != 60 || tp.ProcessMS.Count != 60 || tp.SendMS.Count != 60 {
			t.Errorf("topic %s counts: %+v", tp.Topic, tp)
		}
		if tp.QueueWaitMS.P99 < tp.QueueWaitMS.P50 || tp.QueueWaitMS.Max > s.EndToEndMS.Max {
			t.Errorf("topic %s queue wait %+v vs end-to-end %+v", tp.Topic, tp.QueueWaitMS, s.EndToEndMS)
		}
	}
	for _, want := range []string{"end-to-end", "wait retrieval.requests", "process retrieval.results", "completed 60"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, stdout.String())
		}
	}

	// The slowest request: the whole trace, all in this process, and really
	// the slowest of the 60 (the spans file holds them all).
	slowest := s.Slowest
	if slowest == nil || s.UntrackedTraces != 0 || s.TruncatedSpans != 0 {
		t.Fatalf("slowest %+v untracked %d truncated %d", slowest, s.UntrackedTraces, s.TruncatedSpans)
	}
	if math.Abs(slowest.DurationMS-s.EndToEndMS.Max) > s.EndToEndMS.Max*0.001+0.001 {
		t.Fatalf("slowest %.3f ms, end-to-end max %.3f ms", slowest.DurationMS, s.EndToEndMS.Max)
	}
	checkPipelineTrace(t, *slowest)
	if !strings.Contains(stdout.String(), "slowest request: trace "+slowest.TraceID) || !strings.Contains(stdout.String(), "\n        process retrieval.candidates ") {
		t.Fatalf("summary text lacks the slowest request's waterfall:\n%s", stdout.String())
	}
	read := readSpans(t, spansFile)
	traces := spans.GroupTraces(read)
	if len(traces) != 60 || traces[0].TraceID != slowest.TraceID || traces[0].DurationMS != slowest.DurationMS {
		t.Fatalf("spans file: %d traces, the first %s %.3f ms; slowest %s %.3f ms", len(traces), traces[0].TraceID, traces[0].DurationMS, slowest.TraceID, slowest.DurationMS)
	}
	for _, tr := range traces {
		checkPipelineTrace(t, tr)
	}

	// kretrieve trace draws it from the file, and lists the file's traces.
	var out bytes.Buffer
	if err := run(t.Context(), []string{"trace", "--spans-file", spansFile, strings.ToUpper(slowest.TraceID)}, mapEnv(nil), &out, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 15 || !strings.HasPrefix(lines[0], "trace "+slowest.TraceID+"  14 spans") || !strings.HasPrefix(lines[1], "request ") ||
		!strings.HasPrefix(lines[2], "  send retrieval.requests") || !strings.Contains(out.String(), "kretrieve-run") {
		t.Fatalf("trace from the spans file:\n%s", out.String())
	}
	out.Reset()
	if err := run(t.Context(), []string{"trace", "--spans-file", spansFile}, mapEnv(nil), &out, &stderr); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 61 || !strings.HasPrefix(lines[1], slowest.TraceID) {
		t.Fatalf("trace list:\n%s", out.String())
	}
}

// checkPipelineTrace checks that tr is one request's whole trace through
// the pipeline: its 14 spans, connected, the root lasting tr.DurationMS.
func checkPipelineTrace(t *testing.T, tr spans.Trace) {
	t.Helper()
	want := []string{"request", "send retrieval.requests", "wait retrieval.requests", "process retrieval.requests", "search",
		"send retrieval.candidates", "wait retrieval.candidates", "process retrieval.candidates", "load documents", "dedupe", "rerank",
		"send retrieval.results", "wait retrieval.results", "process retrieval.results"}
	ids := map[string]bool{}
	var names []string
	for _, s := range tr.Spans {
		ids[s.SpanID] = true
		names = append(names, s.Name)
	}
	slices.Sort(names)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(names, want) {
		t.Fatalf("trace %s spans %v, want %v", tr.TraceID, names, want)
	}
	for _, s := range tr.Spans {
		if s.TraceID != tr.TraceID || (s.Name == "request") != (s.ParentSpanID == "") || s.ParentSpanID != "" && !ids[s.ParentSpanID] {
			t.Fatalf("trace %s: span %s (trace %s parent %s) not connected", tr.TraceID, s.Name, s.TraceID, s.ParentSpanID)
		}
		if s.Name == "request" && float64(s.Duration())/1e6 != tr.DurationMS {
			t.Fatalf("trace %s: root %d ns, trace %.6f ms", tr.TraceID, s.Duration(), tr.DurationMS)
		}
	}
}

// TestProduceWaitAgainstWorkerCommands runs the retrieval and enrichment
// commands against a broker and publishes through the produce command.
func TestProduceWaitAgainstWorkerCommands(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t)})
	startCommands(t, env, "retrieval", "enrichment")

	queries := filepath.Join(t.TempDir(), "queries.txt")
	if err := os.WriteFile(queries, []byte("read zip archives\n\nsha256 checksum\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"produce", "--wait", "--json", "--timeout", "30s", "--top-k", "3", "--file", queries, "parse a URL"}, env, &stdout, &stderr)
	if err != nil {
		t.Fatalf("produce: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	n := 0
	for sc.Scan() {
		var line outcomeLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if line.Outcome != "completed" || line.Result == nil || len(line.Result.Documents) == 0 || len(line.Result.Documents) > 3 {
			t.Fatalf("line %+v", line)
		}
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(line.TraceID) || line.Result.RequestID != line.RequestID {
			t.Fatalf("ids in %+v", line)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d results, want 3:\n%s", n, stdout.String())
	}
}

// TestGatewayCommand serves the gateway command against worker commands and
// searches through it over HTTP.
func TestGatewayCommand(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	addr := freeAddr(t)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t), "KRETRIEVE_HTTP_LISTEN": addr})
	startCommands(t, env, "retrieval", "enrichment", "gateway")
	waitReady(t, addr)
	resp, err := http.Post("http://"+addr+"/v1/search", "application/json", strings.NewReader(`{"query":"parse the query string","top_k":2}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		RequestID string `json:"request_id"`
		TraceID   string `json:"trace_id"`
		Documents []struct {
			ID, Snippet string
		} `json:"documents"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(body.Documents) == 0 || body.Documents[0].ID != "url" || !strings.Contains(body.Documents[0].Snippet, "<mark>") {
		t.Fatalf("status %d body %+v", resp.StatusCode, body)
	}
}

// TestRunServePortTaken: run --serve whose --http-listen port another
// process holds fails with an error naming the flag, and never says it is
// serving (security #16, finding 8: it printed "serving" and exited 0, so
// the port's holder got the traffic). On a free port it serves the gateway
// and the console at /console/.
func TestRunServePortTaken(t *testing.T) {
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var stdout, stderr bytes.Buffer
	err = run(t.Context(), []string{"run", "--serve", "--requests", "0", "--log-level", "warn", "--http-listen", holder.Addr().String()}, mapEnv(nil), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "http-listen "+holder.Addr().String()) {
		t.Fatalf("run --serve on a taken port: err %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "serving") || strings.Contains(stdout.String(), "serving") {
		t.Fatalf("run --serve on a taken port says it is serving:\n%s%s", stdout.String(), stderr.String())
	}

	// On a free port it serves until interrupted, then ends without error.
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	var serveErr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"run", "--serve", "--requests", "0", "--log-level", "warn", "--http-listen", addr,
			"--console-allowed-hosts", "console.example,kretrieve.internal"}, mapEnv(nil), &bytes.Buffer{}, &serveErr)
	}()
	waitReady(t, addr)
	checkConsoleMounted(t, "http://"+addr+"/console/")
	cancel()
	if err := <-done; err != nil || !strings.Contains(serveErr.String(), "gateway=http://"+addr) || !strings.Contains(serveErr.String(), "console=http://"+addr+"/console/") {
		t.Fatalf("run --serve: %v\n%s", err, serveErr.String())
	}
}

// checkConsoleMounted: run --serve serves the console's page under its
// Content-Security-Policy, its map names the pipeline's stages, and it
// answers to the names of --console-allowed-hosts but not to others.
func checkConsoleMounted(t *testing.T, base string) {
	t.Helper()
	resp, page := httpGet(t, base)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") || !strings.Contains(string(page), "app.js") {
		t.Fatalf("GET %s: %d, CSP %q, page:\n%s", base, resp.StatusCode, resp.Header.Get("Content-Security-Policy"), page)
	}
	resp, body := httpGet(t, base+"api/map")
	var doc struct {
		Stages []struct{ Name string } `json:"stages"`
	}
	if err := json.Unmarshal(body, &doc); resp.StatusCode != http.StatusOK || err != nil || len(doc.Stages) != 2 || doc.Stages[0].Name != "retrieval" {
		t.Fatalf("GET %sapi/map: %d %v\n%s", base, resp.StatusCode, err, body)
	}
	u, err := url.Parse(base + "api/map")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]int{"kretrieve.internal": http.StatusOK, "console.example:8080": http.StatusOK, "rebound.example": http.StatusForbidden} {
		// As a browser sends it for a page of that name resolved to
		// the console's address.
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", u.Path, host)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Errorf("GET %sapi/map as %s: %d, want %d", base, host, resp.StatusCode, want)
		}
	}
}

// httpGet GETs url and returns the response with its whole body.
func httpGet(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// freeAddr returns a free local TCP address.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitReady waits until the gateway on addr answers /readyz with 200.
func waitReady(t *testing.T, addr string) {
	t.Helper()
	var err error
	ready := poll.Wait(20*time.Second, func() bool {
		var resp *http.Response
		if resp, err = http.Get("http://" + addr + "/readyz"); err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if !ready {
		t.Fatalf("gateway on %s not ready: %v", addr, err)
	}
}

// startCommands runs long-running commands until the test ends, failing the
// test if one returns an error.
func startCommands(t *testing.T, env func(string) string, commands ...string) {
	t.Helper()
	for _, cmd := range commands {
		startCommand(t, env, cmd)
	}
}

// startCommand runs `kretrieve cmd` until the returned stop is called (it
// waits for the command to return) or the test ends.
func startCommand(t *testing.T, env func(string) string, cmd string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var stderr bytes.Buffer
		if err := run(ctx, []string{cmd}, env, &bytes.Buffer{}, &stderr); err != nil {
			t.Errorf("%s: %v\n%s", cmd, err, stderr.String())
		}
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	t.Cleanup(stop)
	return stop
}

// TestMetricsListen: a long-running command given --metrics-listen serves
// its metrics for Prometheus, the process's resource and Go runtime
// metrics among them.
func TestMetricsListen(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_HTTP_LISTEN": addr,
		"KRETRIEVE_METRICS_LISTEN": metricsAddr, "OTEL_TRACES_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"})
	startCommands(t, env, "gateway")
	waitReady(t, addr)
	resp, body := httpGet(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{`service_name="kretrieve-gateway"`, "go_goroutine"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("GET /metrics: status %d, no %q in:\n%.2000s", resp.StatusCode, want, body)
		}
	}
}
