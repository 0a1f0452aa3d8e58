// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/ops/status/statustest"
)

func TestLoadLagConfig(t *testing.T) {
	env := mapEnv(map[string]string{
		"KRETRIEVE_GROUPS":  " a, b ,,",
		"KRETRIEVE_WATCH":   "2s",
		"KRETRIEVE_JSON":    "true",
		"KRETRIEVE_BROKERS": "k1:9092",
	})
	cfg, err := loadLagConfig(nil, env, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.groups, "|") != "a|b" || cfg.watch != 2*time.Second || !cfg.json || cfg.brokers != "k1:9092" || cfg.clientID != "kretrieve-lag" {
		t.Fatalf("variables not applied: %+v", cfg)
	}
	cfg, err = loadLagConfig([]string{"--watch", "0", "--groups", "c"}, env, &bytes.Buffer{})
	if err != nil || cfg.watch != 0 || strings.Join(cfg.groups, "|") != "c" {
		t.Fatalf("flags did not override the variables: %+v, %v", cfg, err)
	}
	cfg, err = loadLagConfig(nil, mapEnv(nil), &bytes.Buffer{})
	if err != nil || strings.Join(cfg.groups, "|") != "retrieval|enrichment" || cfg.watch != 0 || cfg.json {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}

	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad watch variable", map[string]string{"KRETRIEVE_WATCH": "soon"}, nil, "KRETRIEVE_WATCH"},
		{"negative watch", nil, []string{"--watch", "-1s"}, "watch"},
		{"no groups", nil, []string{"--groups", " , "}, "groups"},
		{"arguments", nil, []string{"retrieval"}, "unexpected arguments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadLagConfig(tt.args, mapEnv(tt.env), &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// lagFixture is a broker whose topic retrieval.requests has 5 records on
// partition 0 and 3 on partition 1, the record at offset o stamped base + o
// seconds (base a minute ago). Group retrieval committed 2 on partition 0
// and 3 (all) on partition 1; group enrichment does not exist.
type lagFixture struct {
	env  map[string]string
	base time.Time
}

func newLagFixture(t *testing.T) lagFixture {
	t.Helper()
	b := brokertest.NewBroker(t, 2)
	f := lagFixture{
		env:  map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "error"},
		base: time.Now().Add(-time.Minute).Truncate(time.Millisecond),
	}
	ctx := t.Context()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if resp, err := adm.CreateTopic(ctx, 2, 1, nil, "retrieval.requests"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	var records []*kgo.Record
	for p, n := range []int{5, 3} {
		for o := range n {
			records = append(records, &kgo.Record{Topic: "retrieval.requests", Partition: int32(p), Value: []byte("{}"), Timestamp: f.at(int64(o))})
		}
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "retrieval.requests", Partition: 0, At: 2, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "retrieval.requests", Partition: 1, At: 3, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, "retrieval", os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f lagFixture) at(o int64) time.Time { return f.base.Add(time.Duration(o) * time.Second) }

// checkSeconds checks that s is the age of the record at offset o, measured
// between before and after, printed with the given precision.
func (f lagFixture) checkSeconds(t *testing.T, s float64, o int64, before, after time.Time, precision float64) {
	t.Helper()
	lo, hi := before.Sub(f.at(o)).Seconds(), after.Sub(f.at(o)).Seconds()
	if s < lo-precision || s > hi+precision {
		t.Errorf("lag %.3f s, want the age of offset %d: between %.3f and %.3f", s, o, lo, hi)
	}
}

func TestLagCommandPrintsTable(t *testing.T) {
	f := newLagFixture(t)
	var stdout, stderr bytes.Buffer
	before := time.Now()
	err := run(t.Context(), []string{"lag", "--groups", "retrieval"}, mapEnv(f.env), &stdout, &stderr)
	after := time.Now()
	if err != nil {
		t.Fatalf("lag: %v\n%s", err, stderr.String())
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	want := [][]string{
		{"GROUP", "TOPIC", "PARTITION", "COMMITTED", "END", "LAG", "LAG(s)"},
		{"retrieval", "retrieval.requests", "0", "2", "5", "3"},
		{"retrieval", "retrieval.requests", "1", "3", "3", "0", "0.0"},
		{"retrieval", "(total)", "3"},
	}
	if len(rows) != len(want) {
		t.Fatalf("output:\n%s", stdout.String())
	}
	for i, w := range want {
		if strings.Join(rows[i][:len(w)], " ") != strings.Join(w, " ") {
			t.Errorf("row %d = %q, want it to start with %q", i, rows[i], w)
		}
	}
	// The age of offset 2 (the first unconsumed), on partition 0 and as the
	// group's largest, to the printed 0.1 s.
	for _, cell := range []string{rows[1][6], rows[3][3]} {
		s, err := strconv.ParseFloat(cell, 64)
		if err != nil {
			t.Fatalf("LAG(s) %q: %v", cell, err)
		}
		f.checkSeconds(t, s, 2, before, after, 0.05)
	}
}

func TestLagCommandJSONLines(t *testing.T) {
	f := newLagFixture(t)
	f.env["KRETRIEVE_JSON"] = "true" // and the default groups: retrieval, enrichment
	var stdout, stderr bytes.Buffer
	before := time.Now()
	err := run(t.Context(), []string{"lag"}, mapEnv(f.env), &stdout, &stderr)
	after := time.Now()
	// enrichment does not exist: reported, and the command fails.
	if err == nil || !strings.Contains(err.Error(), "group enrichment") || !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatalf("err = %v, want the unknown group enrichment\n%s", err, stderr.String())
	}
	var lines []lagLine
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var l lagLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), stdout.String())
	}
	if l := lines[0]; l.Group != "enrichment" || l.Partition != -1 || !strings.Contains(l.Error, "GROUP_ID_NOT_FOUND") {
		t.Errorf("unknown group line %+v", l)
	}
	p0, p1 := lines[1], lines[2]
	if p0.Group != "retrieval" || p0.Topic != "retrieval.requests" || p0.Partition != 0 || p0.Committed != 2 || p0.End != 5 || p0.Lag != 3 || p0.Error != "" {
		t.Errorf("partition 0 line %+v", p0)
	}
	if p0.OldestTimestamp == nil || !p0.OldestTimestamp.Equal(f.at(2)) {
		t.Errorf("partition 0 oldest timestamp %v, want %v", p0.OldestTimestamp, f.at(2))
	}
	f.checkSeconds(t, p0.LagSeconds, 2, before, after, 1e-6)
	if p1.Partition != 1 || p1.Committed != 3 || p1.End != 3 || p1.Lag != 0 || p1.LagSeconds != 0 || p1.OldestTimestamp != nil || p1.Error != "" {
		t.Errorf("partition 1 line %+v", p1)
	}
	if p0.Time.Before(before) || p0.Time.After(after) {
		t.Errorf("time %v, want between %v and %v", p0.Time, before, after)
	}
}

func TestLagCommandWatch(t *testing.T) {
	f := newLagFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"lag", "--groups", "retrieval", "--watch", "50ms"}, mapEnv(f.env), &stdout, &stderr)
	}()
	if !poll.Wait(20*time.Second, func() bool { return strings.Count(stdout.String(), "GROUP") >= 3 }) {
		t.Fatalf("3 tables not printed:\n%s\n%s", stdout.String(), stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("lag --watch: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lag --watch did not stop when its context ended")
	}
	tables := strings.Split(strings.TrimSpace(stdout.String()), "\n\n")
	if len(tables) < 3 {
		t.Fatalf("%d tables, want blank-line-separated tables:\n%s", len(tables), stdout.String())
	}
	for _, tbl := range tables {
		if !strings.HasPrefix(tbl, "GROUP") || !strings.Contains(tbl, "retrieval  retrieval.requests  0") || !strings.Contains(tbl, "(total)") {
			t.Errorf("table:\n%s", tbl)
		}
	}
}

// TestLagCommandShowsTheIndexes: on a seeded pipeline whose retrieval
// worker says, in its pathway window, that its index has applied 2 of the
// documents topic's 6 records, lag prints the group's table and then the
// index's, 4 records behind by the age of the third; --json gives its
// line with the index and instance; --indexes=false leaves it out.
func TestLagCommandShowsTheIndexes(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	statustest.Seed(t, b.Addr())
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "error"})
	lagOut := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), append([]string{"lag", "--groups", "retrieval"}, args...), env, &stdout, &stderr); err != nil {
			t.Fatalf("lag %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	out := lagOut()
	const instance = "kretrieve-retrieval@test/2-bbbbbb"
	behind := strconv.Itoa(statustest.IndexRecords - statustest.IndexApplied)
	var row, total []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 8 && f[0] == "retrieval" && f[1] == instance:
			row = f
		case len(f) == 5 && f[1] == instance && f[2] == "(total)":
			total = f
		}
	}
	want := []string{"retrieval", instance, "retrieval.documents", "0", strconv.Itoa(statustest.IndexApplied), strconv.Itoa(statustest.IndexRecords), behind}
	if !strings.Contains(out, "INDEX") || len(row) != 8 || strings.Join(row[:7], " ") != strings.Join(want, " ") || len(total) != 5 || total[3] != behind {
		t.Fatalf("the index's rows %q and %q, want %q and its total:\n%s", row, total, want, out)
	}
	if s, err := strconv.ParseFloat(row[7], 64); err != nil || s < statustest.IndexLagAge.Seconds() {
		t.Errorf("LAG(s) %q, want at least %v", row[7], statustest.IndexLagAge)
	}

	var line lagLine
	for _, l := range strings.Split(strings.TrimSpace(lagOut("--json")), "\n") {
		var x lagLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if x.Index != "" {
			line = x
		}
	}
	if line.Index != "retrieval" || line.Instance != instance || line.Group != "" || line.Topic != "retrieval.documents" ||
		line.Committed != statustest.IndexApplied || line.Lag != int64(statustest.IndexRecords-statustest.IndexApplied) || line.OldestTimestamp == nil {
		t.Errorf("index line %+v", line)
	}
	if out := lagOut("--indexes=false"); strings.Contains(out, "INDEX") || strings.Contains(out, "retrieval.documents") {
		t.Errorf("--indexes=false:\n%s", out)
	}
}
