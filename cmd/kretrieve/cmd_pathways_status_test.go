// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/ops/status/statustest"
)

// consoleMap is GET /api/map as the console's script reads it.
type consoleMap struct {
	Stages       []consoleStage
	Edges        []consoleEdge
	Indexes      []consoleIndex
	Completeness struct {
		Entered, Ended, Unfinished uint64
		Waiting                    []struct {
			Where string
			Count uint64
		}
	}
}

type consoleIndex struct {
	Name, Topic    string
	AppliedPerSec  float64               `json:"applied_per_sec"`
	FreshnessP50MS status.Maybe[float64] `json:"freshness_p50_ms"`
	FreshnessP99MS status.Maybe[float64] `json:"freshness_p99_ms"`
	LagRecords     status.Maybe[int64]   `json:"lag_records"`
	LagSeconds     status.Maybe[float64] `json:"lag_seconds"`
	Workers        []struct {
		Instance   string
		Ready      bool
		Position   int64
		Documents  int64
		LagRecords status.Maybe[int64]   `json:"lag_records"`
		LagSeconds status.Maybe[float64] `json:"lag_seconds"`
	}
}

type consoleStage struct {
	Name            string
	ProcessedPerSec float64             `json:"processed_per_sec"`
	DeadLetters     status.Maybe[int64] `json:"dead_letters"`
}

type consoleEdge struct {
	Topic, From, To string
	MsgsPerSec      float64               `json:"msgs_per_sec"`
	EdgeP50MS       status.Maybe[float64] `json:"edge_p50_ms"`
	EdgeP99MS       status.Maybe[float64] `json:"edge_p99_ms"`
	OriginP50MS     status.Maybe[float64] `json:"origin_p50_ms"`
	OriginP99MS     status.Maybe[float64] `json:"origin_p99_ms"`
	LagRecords      status.Maybe[int64]   `json:"lag_records"`
	LagSeconds      status.Maybe[float64] `json:"lag_seconds"`
}

// TestPathwaysAndConsoleMapAgree feeds `kretrieve pathways` and the
// console's map the same Kafka state (statustest.Seed: pathway windows, a
// lagging group, a group that does not exist, dead letters on the
// requests' and the results' dead-letter topics) and checks that they show
// the same numbers, and the same unknowns.
func TestPathwaysAndConsoleMapAgree(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	statustest.Seed(t, b.Addr())
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "error"})
	pathways := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), append([]string{"pathways", "--once"}, args...), env, &stdout, &stderr); err != nil {
			t.Fatalf("pathways: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	var rep pathwaysReport
	cliAt := time.Now()
	if err := json.Unmarshal([]byte(pathways("--json")), &rep); err != nil {
		t.Fatal(err)
	}
	table := pathways()
	m := readConsoleMap(t, b.Addr())
	elapsed := time.Since(cliAt).Seconds()
	t.Logf("pathways:\n%s", table)

	if len(rep.Edges) != 3 || len(m.Edges) != 3 || len(m.Stages) != 2 {
		t.Fatalf("edges %+v\nmap %+v", rep.Edges, m)
	}
	for i, e := range rep.Edges {
		c := m.Edges[i]
		if e.Topic != c.Topic || e.From != c.From || e.To != c.To || e.MsgsPerSecond != c.MsgsPerSec ||
			e.EdgeLatency.P50 != c.EdgeP50MS || e.EdgeLatency.P99 != c.EdgeP99MS ||
			e.OriginLatency.P50 != c.OriginP50MS || e.OriginLatency.P99 != c.OriginP99MS {
			t.Errorf("edge %d: pathways %+v, console %+v", i, e, c)
		}
		// The table shows what the console's JSON holds.
		want := []string{c.Topic, c.From, "→", c.To, rateCell(c.MsgsPerSec), latencyCell(c.EdgeP50MS), latencyCell(c.EdgeP99MS),
			latencyCell(c.OriginP50MS), latencyCell(c.OriginP99MS)}
		if !hasRow(table, want) {
			t.Errorf("the edge table lacks %q", want)
		}
		if i < len(m.Stages) && m.Stages[i].ProcessedPerSec != e.MsgsPerSecond {
			t.Errorf("stage %d processes %v/s, its input edge %v/s", i, m.Stages[i].ProcessedPerSec, e.MsgsPerSecond)
		}
	}
	for i, c := range m.Edges {
		row := stageRow(t, rep, c.Topic)
		if row.Lag != c.LagRecords || row.LagSeconds.Known != c.LagSeconds.Known ||
			math.Abs(row.LagSeconds.V-c.LagSeconds.V) > elapsed+0.1 {
			t.Errorf("%s: pathways lag %+v %+v, console %+v %+v", c.Topic, row.Lag, row.LagSeconds, c.LagRecords, c.LagSeconds)
		}
		dead := status.Maybe[int64]{} // the results: no stage, no dead letters
		if i < len(m.Stages) {
			dead = m.Stages[i].DeadLetters
		}
		if row.DeadLetters != dead {
			t.Errorf("%s: pathways dead letters %+v, console %+v", c.Topic, row.DeadLetters, dead)
		}
		// The table's row, but for the age, measured at another moment.
		want := []string{c.Topic, cmpOr(row.Group, status.Unknown), recordsCell(c.LagRecords), recordsCell(dead)}
		got := stageLine(table, c.Topic)
		if len(got) != 5 || !slices.Equal(slices.Delete(slices.Clone(got), 3, 4), want) || !sameAge(got[3], c.LagSeconds, elapsed) {
			t.Errorf("stage table row %q, want %q and an age of %+v", got, want, c.LagSeconds)
		}
	}

	// The numbers are the seeded ones, not merely equal.
	req, cand, res := m.Edges[0], m.Edges[1], m.Edges[2]
	if req.MsgsPerSec != 1 || !req.EdgeP99MS.Known || req.LagRecords != status.Of[int64](statustest.LagRecords) ||
		!req.LagSeconds.Known || req.LagSeconds.V < statustest.LagAge.Seconds() {
		t.Errorf("requests edge %+v", req)
	}
	if cand.EdgeP50MS.Known || cand.LagRecords.Known || cand.LagSeconds.Known || res.LagRecords.Known || res.LagSeconds.Known || res.MsgsPerSec != 0.3 {
		t.Errorf("candidates %+v, results %+v: want unknown latencies and lags", cand, res)
	}
	if m.Stages[0].DeadLetters != status.Of[int64](statustest.RequestsDeadLetters) || m.Stages[1].DeadLetters != status.Of[int64](0) {
		t.Errorf("dead letters %+v", m.Stages)
	}
	if !strings.Contains(table, "error: ? "+statustest.MissingGroup+": ") {
		t.Errorf("the missing group's error is not shown")
	}
	checkIndexesAgree(t, rep, m, table, elapsed)
	checkCompletenessAgrees(t, rep, m, table)
}

// checkCompletenessAgrees checks that pathways and the console show the
// seeded cohort alike: 40 entered, 30 ended, 10 waiting on the candidates.
func checkCompletenessAgrees(t *testing.T, rep pathwaysReport, m consoleMap, table string) {
	t.Helper()
	c, mc := rep.Completeness, m.Completeness
	if c.Entered != 40 || c.Ended != 30 || c.Unfinished != 10 || mc.Entered != c.Entered || mc.Ended != c.Ended || mc.Unfinished != c.Unfinished {
		t.Errorf("completeness: pathways %+v, console %+v; want 40 entered, 30 ended, 10 unfinished", c, mc)
	}
	const where = "retrieval.candidates → enrichment"
	if len(c.Waiting) != 1 || c.Waiting[0].Where != where || c.Waiting[0].Count != 10 ||
		len(mc.Waiting) != 1 || mc.Waiting[0].Where != where || mc.Waiting[0].Count != 10 {
		t.Errorf("waiting: pathways %+v, console %+v; want 10 at %s", c.Waiting, mc.Waiting, where)
	}
	if !strings.Contains(table, " unfinished, waiting at "+where) || !strings.Contains(table, "10 requests from ") {
		t.Errorf("the table does not show the unfinished cohort")
	}
}

// checkIndexesAgree checks that pathways and the console show the seeded
// ingestion edge alike: the retrieval index, its rate and freshness, and
// its one worker's position, documents and lag.
func checkIndexesAgree(t *testing.T, rep pathwaysReport, m consoleMap, table string, elapsed float64) {
	t.Helper()
	if len(rep.Indexes) != 1 || len(m.Indexes) != 1 || len(rep.Indexes[0].Workers) != 1 || len(m.Indexes[0].Workers) != 1 {
		t.Fatalf("indexes: pathways %+v, console %+v; want the retrieval index with one worker", rep.Indexes, m.Indexes)
	}
	p, c := rep.Indexes[0], m.Indexes[0]
	if p.Name != c.Name || p.Topic != c.Topic || p.AppliedPerSecond != c.AppliedPerSec || p.Freshness.P50 != c.FreshnessP50MS ||
		p.Freshness.P99 != c.FreshnessP99MS || p.Lag != c.LagRecords || !sameAge(secondsText(p.LagSeconds.V), c.LagSeconds, elapsed) {
		t.Errorf("index: pathways %+v, console %+v", p, c)
	}
	pw, cw := p.Workers[0], c.Workers[0]
	wantLag := int64(statustest.IndexRecords - statustest.IndexApplied)
	if pw.Instance != cw.Instance || pw.Position != cw.Position || pw.Documents != cw.Documents || pw.Ready != cw.Ready ||
		pw.Lag != cw.LagRecords || cw.LagRecords != status.Of(wantLag) || !cw.LagSeconds.Known || cw.LagSeconds.V < statustest.IndexLagAge.Seconds() {
		t.Errorf("worker: pathways %+v, console %+v; want %d records behind, ≥ %v", pw, cw, wantLag, statustest.IndexLagAge)
	}
	if c.Name != "retrieval" || c.AppliedPerSec != 0.6 || !c.FreshnessP99MS.Known || c.FreshnessP99MS.V < 30 {
		t.Errorf("index %+v: want the seeded retrieval index, 0.6 applied/s, a p99 ≥ 30 ms", c)
	}
	// The table: the edge, then the worker indented.
	edge := []string{c.Topic, "→", c.Name, rateCell(c.AppliedPerSec), latencyCell(c.FreshnessP50MS), latencyCell(c.FreshnessP99MS), recordsCell(c.LagRecords)}
	if !slices.ContainsFunc(strings.Split(table, "\n"), func(l string) bool { f := strings.Fields(l); return len(f) == 8 && slices.Equal(f[:7], edge) }) {
		t.Errorf("the index table lacks the edge %q:\n%s", edge, table)
	}
	worker := []string{cw.Instance, "yes", strconv.FormatInt(cw.Position, 10), strconv.FormatInt(cw.Documents, 10), recordsCell(cw.LagRecords)}
	if !slices.ContainsFunc(strings.Split(table, "\n"), func(l string) bool { f := strings.Fields(l); return len(f) == 6 && slices.Equal(f[:5], worker) }) {
		t.Errorf("the index table lacks the worker %q:\n%s", worker, table)
	}
}

// readConsoleMap reads GET /api/map of a console of the seeded pipeline.
func readConsoleMap(t *testing.T, addr string) consoleMap {
	t.Helper()
	con, err := console.New(console.Config{Topology: statustest.Topology(), KafkaOptions: []kgo.Opt{kgo.SeedBrokers(addr)}})
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	srv := httptest.NewServer(con)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/map")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("map: %d %s %v", resp.StatusCode, body, err)
	}
	t.Logf("map: %s", body)
	var m consoleMap
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// stageRow returns the row of topic's consuming stage's group, or the
// topic's row without a group.
func stageRow(t *testing.T, rep pathwaysReport, topic string) pathwayStage {
	t.Helper()
	var rows []pathwayStage
	for _, s := range rep.Stages {
		if s.Topic == topic {
			rows = append(rows, s)
		}
	}
	if len(rows) != 1 {
		t.Fatalf("stage rows of %s: %+v", topic, rows)
	}
	return rows[0]
}

// stageLine returns the fields of the stage table's line of topic.
func stageLine(table, topic string) []string {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == topic {
			return f
		}
	}
	return nil
}

// sameAge reports whether a table's lag age is the console's, measured
// within elapsed seconds of it: both unknown, or both known and close.
func sameAge(cell string, age status.Maybe[float64], elapsed float64) bool {
	if !age.Known {
		return cell == status.Unknown
	}
	v, err := strconv.ParseFloat(cell, 64)
	return err == nil && math.Abs(v-age.V) <= elapsed+0.1
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// hasRow reports whether a line of table has exactly the fields want.
func hasRow(table string, want []string) bool {
	return slices.ContainsFunc(strings.Split(table, "\n"), func(l string) bool { return slices.Equal(strings.Fields(l), want) })
}
