// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

func TestLoadPathwaysConfig(t *testing.T) {
	env := mapEnv(map[string]string{
		"KRETRIEVE_PATHWAYS_TOPIC": "ops.pathways",
		"KRETRIEVE_GROUPS":         "retrieval",
		"KRETRIEVE_JSON":           "true",
		"KRETRIEVE_WATCH":          "5s",
	})
	cfg, err := loadPathwaysConfig(nil, env, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.topic != "ops.pathways" || strings.Join(cfg.groups, ",") != "retrieval" || !cfg.json || cfg.watch != 5*time.Second || cfg.clientID != "kretrieve-pathways" {
		t.Fatalf("variables not applied: %+v", cfg)
	}
	cfg, err = loadPathwaysConfig(nil, mapEnv(nil), &bytes.Buffer{})
	if err != nil || cfg.topic != "kretrieve.pathways" || strings.Join(cfg.groups, ",") != "retrieval,enrichment" || cfg.json || cfg.once || cfg.watch != 0 {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--watch", "-1s"}, "watch"},
		{[]string{"--pathways-topic", "bad topic"}, "pathways-topic"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		if _, err := loadPathwaysConfig(tt.args, mapEnv(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want it to mention %q", tt.args, err, tt.want)
		}
	}

	// The publishing commands' flags.
	wc, err := loadWorkerConfig("retrieval", []string{"--pathways-interval", "250ms"}, mapEnv(map[string]string{"KRETRIEVE_PATHWAYS_TOPIC": "ops.pathways"}), &bytes.Buffer{})
	if err != nil || wc.pathways.interval != 250*time.Millisecond || wc.pathways.topic != "ops.pathways" {
		t.Fatalf("worker: %+v %v", wc.pathways, err)
	}
	gc, err := loadGatewayConfig(nil, mapEnv(map[string]string{"KRETRIEVE_PATHWAYS_INTERVAL": "0"}), &bytes.Buffer{})
	if err != nil || gc.pathways.interval != 0 || gc.pathways.topic != pathwaytopic.DefaultTopic {
		t.Fatalf("gateway: %+v %v", gc.pathways, err)
	}
	rc, err := loadRunConfig(nil, mapEnv(nil), &bytes.Buffer{})
	if err != nil || rc.pathways.interval != pathwaytopic.DefaultInterval {
		t.Fatalf("run: %+v %v", rc.pathways, err)
	}
	if _, err := loadWorkerConfig("enrichment", []string{"--pathways-interval", "1ms"}, mapEnv(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "pathways-interval") {
		t.Fatalf("1ms interval: %v", err)
	}
}

func TestPathwaysRefreshMode(t *testing.T) {
	for _, tt := range []struct {
		cfg      pathwaysConfig
		terminal bool
		every    time.Duration
		redraw   bool
	}{
		{pathwaysConfig{}, true, pathwaysRefresh, true},
		{pathwaysConfig{}, false, 0, false},
		{pathwaysConfig{once: true}, true, 0, false},
		{pathwaysConfig{json: true}, true, 0, false},
		{pathwaysConfig{json: true, watch: time.Second}, true, time.Second, false},
		{pathwaysConfig{watch: time.Second}, false, time.Second, false},
		{pathwaysConfig{watch: time.Second}, true, time.Second, true},
		{pathwaysConfig{watch: time.Second, once: true}, true, 0, false},
	} {
		every, redraw := tt.cfg.refresh(tt.terminal)
		if every != tt.every || redraw != tt.redraw {
			t.Errorf("once %v json %v watch %s terminal %v: every %s redraw %v, want %s %v",
				tt.cfg.once, tt.cfg.json, tt.cfg.watch, tt.terminal, every, redraw, tt.every, tt.redraw)
		}
	}
}

func TestRedrawer(t *testing.T) {
	var b bytes.Buffer
	r := &redrawer{w: &b, on: true}
	for _, f := range []string{"a\nb\nc\n", "d\ne\n", "f\n"} {
		if err := r.frame([]byte(f), true); err != nil {
			t.Fatal(err)
		}
	}
	r.done()
	want := "\x1b[?25l" + "a\nb\nc\n" + "\r\x1b[3A\x1b[J" + "d\ne\n" + "\r\x1b[2A\x1b[J" + "f\n" + "\x1b[?25h"
	if b.String() != want {
		t.Fatalf("redrawn %q, want %q", b.String(), want)
	}
	b.Reset()
	r = &redrawer{w: &b}
	for _, f := range []string{"a\n", "b\n"} {
		if err := r.frame([]byte(f), true); err != nil {
			t.Fatal(err)
		}
	}
	r.done()
	if b.String() != "a\n\nb\n" {
		t.Fatalf("appended %q", b.String())
	}
}

// wantPathway is the pathway of a search through the gateway, by depth.
var wantPathway = []string{
	"kretrieve-gateway → retrieval.requests",
	"retrieval.requests → retrieval",
	"retrieval → retrieval.candidates",
	"retrieval.candidates → enrichment",
	"enrichment → retrieval.results",
	"retrieval.results → kretrieve-gateway",
}

// mainPathway returns the rows of the pathway that starts at the gateway,
// in order, and whether it has every checkpoint.
func mainPathway(rep pathwaysReport) ([]pathwayRow, bool) {
	var rows []pathwayRow
	for i, r := range rep.Pathways {
		if r.Edge != wantPathway[0] || r.Depth != 0 {
			continue
		}
		rows = append(rows, r)
		for _, c := range rep.Pathways[i+1:] {
			if c.Depth == 0 || len(rows) == len(wantPathway) {
				break
			}
			if c.Depth == len(rows) && c.Parent == rows[len(rows)-1].Hash {
				rows = append(rows, c)
			}
		}
		break
	}
	if len(rows) != len(wantPathway) {
		return rows, false
	}
	for i, r := range rows {
		if r.Edge != wantPathway[i] {
			return rows, false
		}
	}
	return rows, true
}

// searchTraffic sends searches through a gateway, one every 20 ms, until
// stopped.
type searchTraffic struct {
	sent atomic.Int64
	stop chan struct{}
	// done receives the error that stopped the searches (nil: stop).
	done chan error
}

// startSearches starts sending searches to the gateway at addr; the test's
// cleanup stops them.
func startSearches(t *testing.T, addr string) *searchTraffic {
	s := &searchTraffic{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				s.done <- nil
				return
			case <-tick.C:
			}
			resp, err := http.Post("http://"+addr+"/v1/search", "application/json", strings.NewReader(`{"query":"parse the query string","top_k":2}`))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil {
				s.done <- fmt.Errorf("search %d: %w", s.sent.Load()+1, err)
				return
			}
			s.sent.Add(1)
		}
	}()
	t.Cleanup(func() {
		select {
		case s.stop <- struct{}{}:
			<-s.done
		default:
		}
	})
	return s
}

// runPathwaysCommand runs `kretrieve pathways args...` and returns its
// report (with --json) and output.
func runPathwaysCommand(t *testing.T, env func(string) string, args ...string) (pathwaysReport, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), append([]string{"pathways"}, args...), env, &stdout, &stderr); err != nil {
		t.Fatalf("pathways: %v\n%s", err, stderr.String())
	}
	var rep pathwaysReport
	if slices.Contains(args, "--json") {
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("pathways --json: %v\n%s", err, stdout.String())
		}
	}
	return rep, stdout.String()
}

// pollPathways runs `kretrieve pathways --once --json args...` until
// done says so, for at most 60 s, failing when the searches fail.
func pollPathways(t *testing.T, env func(string) string, s *searchTraffic, what string, done func(pathwaysReport) bool, args ...string) (pathwaysReport, string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rep, out := runPathwaysCommand(t, env, append([]string{"--once", "--json"}, args...)...)
		if done(rep) {
			return rep, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen in 60 s:\n%s", what, out)
		}
		select {
		case err := <-s.done:
			t.Fatal(err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestPathwaysCommandShowsThePipeline runs the worker and gateway commands
// as separate processes would (each its own metrics and instance), sends
// searches through the gateway and one malformed request, and checks that
// `kretrieve pathways` shows every edge with its rate and latencies while
// traffic flows, and afterwards the totals equal to the searches sent, the
// dead letter and the lag of each stage, as JSON and as tables.
func TestPathwaysCommandShowsThePipeline(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	addr := freeAddr(t)
	env := mapEnv(map[string]string{
		"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t), "KRETRIEVE_HTTP_LISTEN": addr,
		"KRETRIEVE_PATHWAYS_INTERVAL": "100ms",
	})
	startCommands(t, env, "retrieval", "enrichment", "gateway")
	waitReady(t, addr)
	s := startSearches(t, addr)

	// While searches flow: every edge of the pathway, each measured in the
	// last windows.
	rep, out := pollPathways(t, env, s, "the pathway with traffic", func(rep pathwaysReport) bool {
		rows, ok := mainPathway(rep)
		return ok && !slices.ContainsFunc(rows, func(r pathwayRow) bool { return r.Count == 0 })
	})
	t.Logf("pathways --json with traffic:\n%s", out)
	if strings.Count(out, "\n") != 1 {
		t.Errorf("--json: want one document on one line:\n%s", out)
	}
	checkPathwayWithTraffic(t, rep)

	// Traffic stops; a malformed request goes straight to the topic,
	// without a pathway header, and a record that is no aggregate to the
	// aggregate topic.
	s.stop <- struct{}{}
	if err := <-s.done; err != nil {
		t.Fatal(err)
	}
	searches := uint64(s.sent.Load())
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(t.Context(),
		&kgo.Record{Topic: "retrieval.requests", Value: []byte("not json")},
		&kgo.Record{Topic: pathwaytopic.DefaultTopic, Key: []byte("x"), Value: []byte("\x1b[2J not an aggregate")},
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rep, out = pollPathways(t, env, s, "the totals and the dead-letter pathway", func(rep pathwaysReport) bool {
		rows, ok := mainPathway(rep)
		return ok && !slices.ContainsFunc(rows, func(r pathwayRow) bool { return r.Total != searches }) &&
			stagesSettled(rep) && rep.Skipped["malformed"] == 1 && deadLetterPathway(rep)
	})
	t.Logf("pathways --json after %d searches:\n%s", searches, out)
	rows, _ := mainPathway(rep)
	if !deadLetterPathway(rep) {
		t.Errorf("no dead-letter pathway:\n%s", out)
	}

	// The same as tables.
	_, out = runPathwaysCommand(t, env)
	t.Logf("pathways:\n%s", out)
	checkPathwaysTables(t, out, rows, searches)
}

// checkPathwayWithTraffic checks the report taken while searches flow:
// the three processes, and the pathway's checkpoints with their rates and
// latencies.
func checkPathwayWithTraffic(t *testing.T, rep pathwaysReport) {
	t.Helper()
	services := map[string]bool{}
	for _, in := range rep.Instances {
		services[in.Service] = !in.Stale
	}
	if len(rep.Instances) != 3 || !services["kretrieve-gateway"] || !services["kretrieve-retrieval"] || !services["kretrieve-enrichment"] {
		t.Errorf("instances %+v", rep.Instances)
	}
	rows, _ := mainPathway(rep)
	for i, r := range rows {
		wantDir := map[bool]string{true: "out", false: "in"}[i%2 == 0]
		if r.Depth != i || r.Direction != wantDir || r.Instances != 1 || r.Overflow || r.Total < r.Count || r.MsgsPerSecond <= 0 {
			t.Errorf("row %d %+v", i, r)
		}
		if i > 0 && r.Parent != rows[i-1].Hash || i == 0 && r.Parent != strings.Repeat("0", 16) {
			t.Errorf("row %d: parent %s, want the hash of the row before", i, r.Parent)
		}
		e, o := r.EdgeLatency, r.OriginLatency
		if e.P50.V > e.P95.V || e.P95.V > e.P99.V || o.P50.V > o.P95.V || o.P95.V > o.P99.V {
			t.Errorf("row %d: quantiles out of order: edge %+v origin %+v", i, e, o)
		}
		// Records take time to get anywhere but their first checkpoint.
		if !e.P50.Known || !o.P50.Known || i > 0 && (e.P99.V <= 0 || o.P99.V <= 0) {
			t.Errorf("row %d: latencies %+v %+v", i, e, o)
		}
	}
	if g, r := rows[1], rows[2]; g.Group != "retrieval" || g.Topic != "retrieval.requests" || r.Group != "retrieval" || r.Topic != "retrieval.candidates" {
		t.Errorf("checkpoints %+v %+v", g, r)
	}
	// From origin, the results arrive after the requests were read.
	if last, first := rows[5].OriginLatency.P99.V, rows[1].OriginLatency.P50.V; last < first {
		t.Errorf("origin p99 at the end %v < p50 at the start %v", last, first)
	}
}

// deadLetterPathway reports whether the report holds the malformed
// request's pathway: its own, starting at retrieval, going to the
// dead-letter topic. The retrieval worker publishes it with its next
// aggregate, which may come after the totals settle.
func deadLetterPathway(rep pathwaysReport) bool {
	for i, r := range rep.Pathways {
		if r.Edge == "retrieval.requests → retrieval" && r.Depth == 0 && r.Total == 1 && i+1 < len(rep.Pathways) {
			next := rep.Pathways[i+1]
			if next.Edge == "retrieval → retrieval.requests.dlq" && next.Parent == r.Hash && next.Depth == 1 && next.Total == 1 {
				return true
			}
		}
	}
	return false
}

// checkPathwaysTables checks the tables once traffic stopped: the header,
// the pathway's rows in order with their totals, the stages.
func checkPathwaysTables(t *testing.T, out string, rows []pathwayRow, searches uint64) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "pathways of 3 processes from kretrieve.pathways at ") || lines[1] != "skipped 1 aggregate record: 1 malformed" {
		t.Errorf("header:\n%s", out)
	}
	at := 0
	for i, edge := range wantPathway {
		for at < len(lines) && !strings.Contains(lines[at], "  "+strings.Repeat("  ", i)+edge+"  ") {
			at++
		}
		if at == len(lines) {
			t.Fatalf("the table lacks %q at depth %d, after the edges before it:\n%s", edge, i, out)
		}
		f := strings.Fields(lines[at])
		if f[0] != rows[i].Hash[:8] || !slices.Contains(f, strconv.FormatUint(searches, 10)) {
			t.Errorf("row %q: want hash %s and total %d", lines[at], rows[i].Hash[:8], searches)
		}
	}
	for _, want := range [][]string{
		{"STAGE", "GROUP", "LAG", "LAG(s)", "DEAD", "LETTERS"},
		{"retrieval.requests", "retrieval", "0", "0.0", "1"},
		{"retrieval.candidates", "enrichment", "0", "0.0", "0"},
		// No stage consumes the results: no lag, no dead letters.
		{"retrieval.results", "-", "-", "-", "-"},
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Join(strings.Fields(l), " ") == strings.Join(want, " ") }) {
			t.Errorf("the stage table lacks %q:\n%s", want, out)
		}
	}
}

// stagesSettled reports whether both groups have consumed everything and
// the malformed request is the one dead letter.
func stagesSettled(rep pathwaysReport) bool {
	want := map[string]pathwayStage{
		"retrieval.requests":   {Group: "retrieval", Lag: status.Of[int64](0), DeadLetters: status.Of[int64](1)},
		"retrieval.candidates": {Group: "enrichment", Lag: status.Of[int64](0), DeadLetters: status.Of[int64](0)},
		"retrieval.results":    {}, // unknown: no stage consumes it
	}
	n := 0
	for _, s := range rep.Stages {
		w, ok := want[s.Topic]
		if !ok || s.Group != w.Group || s.Lag != w.Lag || s.DeadLetters != w.DeadLetters {
			return false
		}
		n++
	}
	return n == len(want)
}

// TestPathwaysCommandWithoutAggregates: before any process publishes, the
// command says so and fails once, and watching goes on (one JSON line per
// refresh).
func TestPathwaysCommandWithoutAggregates(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "error"})
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"pathways", "--once"}, env, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no process has published pathways yet") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(stdout.String(), "pathways of 0 processes") || !strings.Contains(stdout.String(), "STAGE") {
		t.Fatalf("output:\n%s", stdout.String())
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"pathways", "--json", "--watch", "50ms"}, env, &out, &stderr) }()
	if !poll.Wait(30*time.Second, func() bool { return strings.Count(out.String(), "\n") >= 3 }) {
		t.Fatalf("3 documents not printed:\n%s", out.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("pathways --watch: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var rep pathwaysReport
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "no process has published") {
			t.Fatalf("line %s: %v", sc.Text(), err)
		}
	}
}

// quantiles are known quantiles in milliseconds.
func quantiles(p50, p95, p99 float64) status.Quantiles {
	return status.Quantiles{P50: status.Of(p50), P95: status.Of(p95), P99: status.Of(p99)}
}

// TestPathwaysTables: the tables of a report, whose unknown numbers (an
// idle pathway's latencies, an edge nobody read, a lag age that could not
// be read, a group in error) print as status.Unknown.
func TestPathwaysTables(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rep := pathwaysReport{
		Time: at, Topic: "kretrieve.pathways",
		Instances: []pathwayInstance{{Service: "a"}, {Service: "b", Stale: true}},
		Pathways: []pathwayRow{
			{Hash: "00000000000000aa", Edge: "svc → t", Count: 30, Total: 300, MsgsPerSecond: 3, EdgeLatency: quantiles(0, 0, 0), OriginLatency: quantiles(0.25, 4.5, 1500)},
			{Hash: "00000000000000bb", Depth: 1, Edge: "t → g", Total: 7},
			{Hash: "0000000000000000", Overflow: true, Edge: "t → g", Count: 1, Total: 1, MsgsPerSecond: 250, EdgeLatency: quantiles(12.5, 90000, 90000), OriginLatency: quantiles(0, 0, 0)},
		},
		Edges: []pathwayEdge{
			{Topic: "t", From: "origin", To: "g", MsgsPerSecond: 3, EdgeLatency: quantiles(0.5, 2, 3.25), OriginLatency: quantiles(0.5, 2, 3.25)},
			{Topic: "u", From: "g", To: "results"},
		},
		Stages: []pathwayStage{
			{Topic: "t", Group: "g", Lag: status.Of[int64](3), LagSeconds: status.Of(1.25), DeadLetters: status.Of[int64](2)},
			{Topic: "u", Group: "g", Lag: status.Of[int64](4), DeadLetters: status.Of[int64](0), Error: "partition 0: no record"},
			{Group: "h", Error: "GROUP_ID_NOT_FOUND"},
		},
		Completeness: status.Completeness{UnfinishedAfter: 30 * time.Second, Since: at.Add(-10 * time.Minute), Until: at.Add(-30 * time.Second),
			Entered: 120, Ended: 80, Expired: 3, DeadLettered: 2, Unfinished: 40, Cohorts: []status.Cohort{
				{Origin: at.Add(-time.Minute), Unfinished: 37, Waiting: []status.Waiting{{Where: "u → h", Count: 37}}},
				{Origin: at.Add(-55 * time.Second), Unfinished: 3, Waiting: []status.Waiting{{Where: "u → h", Count: 2}, {Where: "in h", Count: 1}}},
			}},
		Skipped: map[string]uint64{"malformed": 2, "bad series": 1},
		Errors:  []string{"read kretrieve.pathways: boom"},
	}
	var b bytes.Buffer
	if err := printPathwaysTables(&b, rep); err != nil {
		t.Fatal(err)
	}
	want := `pathways of 1 process (1 stale, not counted) from kretrieve.pathways at 2026-01-02T03:04:05Z
skipped 3 aggregate records: 1 bad series, 2 malformed

PATHWAY   EDGE     MSG/S  COUNT  TOTAL  EDGE p50  p95    p99    ORIGIN p50  p95     p99
00000000  svc → t  3.0    30     300    0         0      0      250µs       4.50ms  1.50s
00000000    t → g  0.0    0      7      -         -      -      -           -       -
overflow  t → g    250    1      1      12.5ms    1m30s  1m30s  0           0       0

TOPIC  FROM → TO    MSG/S  EDGE p50  p99     ORIGIN p50  p99
t      origin → g   3.0    500µs     3.25ms  500µs       3.25ms
u      g → results  0.0    -         -       -           -

completeness of requests by origin (5s cohorts, judged 30s after; 2026-01-02 02:54:05 to 2026-01-02 03:03:35): entered 120, ended 80 (expired 3, dead-lettered 2), unfinished 40
37 requests from 2026-01-02 03:03:05 unfinished, waiting at u → h
3 requests from 2026-01-02 03:03:10 unfinished, waiting at u → h (2), in h (1)

STAGE  GROUP  LAG  LAG(s)  DEAD LETTERS
t      g      3    1.2     2
u      g      4    -       0
?      h      -    -       -
error: u g: partition 0: no record
error: ? h: GROUP_ID_NOT_FOUND
error: read kretrieve.pathways: boom
`
	if b.String() != want {
		t.Fatalf("tables:\n%s\nwant:\n%s", b.String(), want)
	}
}
