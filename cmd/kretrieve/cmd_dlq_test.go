// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
)

func TestLoadDLQConfig(t *testing.T) {
	env := mapEnv(map[string]string{
		"KRETRIEVE_TOPIC_REQUESTS": "req",
		"KRETRIEVE_LIMIT":          "5",
		"KRETRIEVE_ERROR_TYPE":     "transient",
		"KRETRIEVE_REPLAY_GROUP":   "ops",
	})
	cfg, err := loadDLQConfig("replay", []string{"--limit", "7", "--dry-run"}, env, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.limit != 7 || !cfg.dryRun || cfg.errorType != "transient" || cfg.replayGroup != "ops" || cfg.clientID != "kretrieve-dlq" {
		t.Fatalf("config %+v", cfg)
	}
	if got := strings.Join(cfg.deadLetterTopics(), ","); got != "req.dlq,retrieval.candidates.dlq,retrieval.results.dlq" {
		t.Fatalf("default dead-letter topics %s", got)
	}
	cfg, err = loadDLQConfig("list", nil, mapEnv(map[string]string{"KRETRIEVE_DLQ_TOPIC": " a.dlq, ,b.dlq "}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.deadLetterTopics(), ","); got != "a.dlq,b.dlq" || cfg.limit != 0 || cfg.json {
		t.Fatalf("list config %+v, topics %s", cfg, got)
	}
	if cfg, err := loadDLQConfig("replay", nil, mapEnv(nil), &bytes.Buffer{}); err != nil || cfg.replayGroup != dlq.DefaultReplayGroup {
		t.Fatalf("default replay group %q, %v", cfg.replayGroup, err)
	}

	for _, tt := range []struct {
		sub  string
		env  map[string]string
		args []string
		want string
	}{
		{"list", nil, []string{"--limit", "-1"}, "limit"},
		{"list", map[string]string{"KRETRIEVE_LIMIT": "all"}, nil, "KRETRIEVE_LIMIT"},
		{"list", nil, []string{"--reason", "x"}, "reason"}, // replay only
		{"list", nil, []string{"extra"}, "unexpected arguments"},
		{"replay", nil, []string{"--error-type", "transiant"}, "error-type"},
		{"replay", nil, []string{"--replay-group", " "}, "replay-group"},
		{"replay", map[string]string{"KRETRIEVE_DRY_RUN": "maybe"}, nil, "KRETRIEVE_DRY_RUN"},
		{"replay", nil, []string{"--brokers", ","}, "brokers"},
	} {
		if _, err := loadDLQConfig(tt.sub, tt.args, mapEnv(tt.env), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v %v: err = %v, want it to mention %q", tt.sub, tt.env, tt.args, err, tt.want)
		}
	}
}

func TestRunDLQUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"dlq"}, mapEnv(nil), &stdout, &stderr); err == nil || !strings.Contains(stderr.String(), "dlq replay") {
		t.Fatalf("no subcommand: %v\n%s", err, stderr.String())
	}
	if err := run(t.Context(), []string{"dlq", "purge"}, mapEnv(nil), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "purge") {
		t.Fatalf("unknown subcommand: %v", err)
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"dlq", "help"}, mapEnv(nil), &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "dlq list") {
		t.Fatalf("help: %v\n%s", err, stdout.String())
	}
}

func TestDLQAge(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		-time.Second:                  "0s",
		42 * time.Second:              "42s",
		5*time.Minute + 7*time.Second: "5m07s",
		3*time.Hour + 12*time.Minute:  "3h12m",
		47 * time.Hour:                "47h00m",
		4*24*time.Hour + 6*time.Hour:  "4d06h",
	} {
		if got := age(now.Add(-d), now); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
	if got := age(time.Time{}, now); got != "-" {
		t.Errorf("age(zero) = %q", got)
	}
}

// dlqFixture starts a broker with the pipeline topics and writes three dead
// letters as the workers do; it returns the environment of the commands and
// a client on the broker.
func dlqFixture(t *testing.T) (func(string) string, *kgo.Client) {
	t.Helper()
	b := brokertest.NewBroker(t, 1)
	kc := kafkaclient.Config{Brokers: []string{b.Addr()}, Partitions: 1}
	client, err := kgo.NewClient(kafkaclient.Options(kc, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	pipelineTopics := messages.DefaultTopics()
	pipelineTopics.Documents = "" // created compacted by the commands
	if err := kafkaclient.EnsureTopics(t.Context(), client, kc, pipelineTopics.All()...); err != nil {
		t.Fatal(err)
	}
	dead := func(topic, key, reason, errType string, origOffset int, tp string) *kgo.Record {
		hs := []kgo.RecordHeader{{Key: "content-type", Value: []byte("application/json")}}
		if tp != "" {
			hs = append(hs, kgo.RecordHeader{Key: "traceparent", Value: []byte(tp)})
		}
		for _, kv := range [][2]string{
			{deadletters.HeaderReason, reason},
			{deadletters.HeaderErrorType, errType},
			{deadletters.HeaderOriginalTopic, strings.TrimSuffix(topic, messages.DLQSuffix)},
			{deadletters.HeaderOriginalPartition, "0"},
			{deadletters.HeaderOriginalOffset, strconv.Itoa(origOffset)},
			{deadletters.HeaderOriginalTimestamp, time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)},
			{deadletters.HeaderAttempts, "3"},
			{deadletters.HeaderConsumerGroup, "retrieval"},
		} {
			hs = append(hs, kgo.RecordHeader{Key: kv[0], Value: []byte(kv[1])})
		}
		return &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(`{"query":"q"}`), Headers: hs}
	}
	err = client.ProduceSync(t.Context(),
		dead("retrieval.requests.dlq", "req-1", "invalid request: query: required", "permanent", 5, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
		dead("retrieval.requests.dlq", "req-2\ttab", "search: "+strings.Repeat("index closed ", 20)+"\nsecond line", "transient", 6, ""),
		dead("retrieval.candidates.dlq", "req-3", "load documents: store unavailable", "transient", 9, ""),
	).FirstErr()
	if err != nil {
		t.Fatal(err)
	}
	return mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn"}), client
}

func TestDLQListCommand(t *testing.T) {
	env, _ := dlqFixture(t)

	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"dlq", "list", "--json"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("list --json: %v\n%s", err, stderr.String())
	}
	var lines []letterLine
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var l letterLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	// Topic order: candidates before requests.
	if lines[0].DLQTopic != "retrieval.candidates.dlq" || lines[1].Key != "req-1" || lines[2].Key != "req-2\ttab" {
		t.Fatalf("order: %+v", lines)
	}
	l := lines[1]
	if l.DLQTopic != "retrieval.requests.dlq" || l.Offset != 0 || l.Reason != "invalid request: query: required" || l.ErrorType != "permanent" ||
		l.OriginalTopic != "retrieval.requests" || l.OriginalOffset != 5 || l.OriginalTimestamp == nil || l.Attempts != 3 ||
		l.ConsumerGroup != "retrieval" || l.TraceID != "0af7651916cd43dd8448eb211c80319c" || l.ValueBytes != 13 {
		t.Fatalf("line %+v", l)
	}

	stdout.Reset()
	if err := run(t.Context(), []string{"dlq", "list", "--limit", "2"}, mapEnvWith(env, "KRETRIEVE_DLQ_TOPIC", "retrieval.requests.dlq"), &stdout, &stderr); err != nil {
		t.Fatalf("list: %v\n%s", err, stderr.String())
	}
	rows := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(rows) != 3 {
		t.Fatalf("table:\n%s", stdout.String())
	}
	header := regexp.MustCompile(`\s{2,}`).Split(rows[0], -1)
	if strings.Join(header, "|") != "DLQ TOPIC|PARTITION|OFFSET|AGE|ERROR TYPE|ATTEMPTS|ORIGINAL|KEY|REASON|TRUNCATED|TRACE ID" {
		t.Fatalf("header %q", header)
	}
	for _, want := range []string{"retrieval.requests.dlq", "permanent", "retrieval.requests/0@5", "req-1", "invalid request: query: required", "0af7651916cd43dd8448eb211c80319c"} {
		if !strings.Contains(rows[1], want) {
			t.Errorf("row 1 lacks %q:\n%s", want, rows[1])
		}
	}
	if !strings.Contains(rows[2], "req-2.tab") || !strings.Contains(rows[2], "…") || strings.Contains(rows[2], "second line") {
		t.Errorf("row 2: key not made printable or reason not truncated to one line:\n%s", rows[2])
	}
	if !regexp.MustCompile(`\s[0-9]+s\s`).MatchString(rows[1]) {
		t.Errorf("row 1 has no age in seconds:\n%s", rows[1])
	}
}

func TestDLQReplayCommand(t *testing.T) {
	env, client := dlqFixture(t)
	adm := kadm.NewClient(client)
	published := func() int64 {
		ends, err := adm.ListEndOffsets(t.Context(), "retrieval.requests", "retrieval.candidates")
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return n
	}

	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"dlq", "replay", "--dry-run", "--error-type", "transient"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("dry run: %v\n%s", err, stderr.String())
	}
	// One line per letter, in each partition's order but in no promised
	// order across the two topics, then the summary.
	want := "would replay retrieval.candidates.dlq/0@0 -> retrieval.candidates original_trace_id=-\n" +
		"would replay retrieval.requests.dlq/0@1 -> retrieval.requests original_trace_id=-\n" +
		"dry run: would replay 2, skip 1, fail 0 (group kretrieve-dlq-replay); nothing published or committed\n"
	lines := strings.SplitAfter(stdout.String(), "\n")
	if n := len(lines); n > 2 {
		slices.Sort(lines[:n-2]) // the last is "" after the summary's newline
	}
	if got := strings.Join(lines, ""); got != want {
		t.Fatalf("dry run output:\n%s\nwant (letters sorted):\n%s", got, want)
	}
	if n := published(); n != 0 {
		t.Fatalf("dry run published %d records", n)
	}

	stdout.Reset()
	if err := run(t.Context(), []string{"dlq", "replay", "--json"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr.String())
	}
	var replayed []replayLine
	var sum replaySummary
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"replayed"`) {
			if err := json.Unmarshal(sc.Bytes(), &sum); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var l replayLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		replayed = append(replayed, l)
	}
	if sum != (replaySummary{Replayed: 3, Group: "kretrieve-dlq-replay"}) || len(replayed) != 3 {
		t.Fatalf("summary %+v, %d lines:\n%s", sum, len(replayed), stdout.String())
	}
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, l := range replayed {
		if !hex32.MatchString(l.TraceID) || l.TraceID == l.OriginalTraceID || l.TargetOffset < 0 || l.DryRun ||
			l.Topic != strings.TrimSuffix(l.DLQTopic, ".dlq") {
			t.Fatalf("replayed line %+v", l)
		}
	}
	if replayed[1].OriginalTraceID != "0af7651916cd43dd8448eb211c80319c" {
		t.Fatalf("original trace id %+v", replayed[1])
	}
	if n := published(); n != 3 {
		t.Fatalf("%d records published, want 3", n)
	}

	stdout.Reset()
	if err := run(t.Context(), []string{"dlq", "replay"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("second replay: %v\n%s", err, stderr.String())
	}
	if stdout.String() != "replayed 0, skipped 0, failed 0 (group kretrieve-dlq-replay)\n" || published() != 3 {
		t.Fatalf("second replay:\n%s", stdout.String())
	}

	// Another group starts from the beginning; its text lines name both traces.
	stdout.Reset()
	if err := run(t.Context(), []string{"dlq", "replay", "--replay-group", "again", "--limit", "1", "--dlq-topic", "retrieval.requests.dlq"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("replay again: %v\n%s", err, stderr.String())
	}
	if !regexp.MustCompile(`^replayed retrieval\.requests\.dlq/0@0 -> retrieval\.requests/0@\d+ trace_id=[0-9a-f]{32} original_trace_id=0af7651916cd43dd8448eb211c80319c\nreplayed 1, skipped 0, failed 0 \(group again\)\n$`).MatchString(stdout.String()) {
		t.Fatalf("replay again:\n%s", stdout.String())
	}
}

// mapEnvWith returns env with k set to v.
func mapEnvWith(env func(string) string, k, v string) func(string) string {
	return func(key string) string {
		if key == k {
			return v
		}
		return env(key)
	}
}

// TestDLQListShowsTruncation: a dead letter that kept only part of its
// original record (deadletters.BuildMinimal, as the runtime writes when the
// whole would exceed the broker's message size) says so in the table and in
// --json; replay's refusal tells users to look there.
func TestDLQListShowsTruncation(t *testing.T) {
	env, client := dlqFixture(t)
	orig := &kgo.Record{Topic: "retrieval.requests", Key: []byte("req-big"), Value: bytes.Repeat([]byte("x"), 5000),
		Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")}}}
	letter := deadletters.BuildMinimal(orig, deadletters.Failure{Reason: "record too large", ErrorType: deadletters.ErrorTypePermanent, Attempts: 1})
	if err := client.ProduceSync(t.Context(), letter).FirstErr(); err != nil {
		t.Fatal(err)
	}
	want := deadletters.FromRecord(letter).Truncated
	if want == "" || !strings.Contains(want, "value=0/5000") {
		t.Fatalf("BuildMinimal wrote truncated=%q", want)
	}

	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"dlq", "list", "--json", "--dlq-topic", "retrieval.requests.dlq"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("list --json: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	var truncated []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l letterLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		truncated = append(truncated, l.Truncated)
	}
	if !slices.Equal(truncated, []string{"", "", want}) {
		t.Errorf("--json truncated fields %q, want the last letter's %q", truncated, want)
	}
	if strings.Count(out, `"truncated"`) != 1 {
		t.Errorf("--json: a whole letter carries a truncated field:\n%s", out)
	}

	stdout.Reset()
	if err := run(t.Context(), []string{"dlq", "list", "--dlq-topic", "retrieval.requests.dlq"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("list: %v\n%s", err, stderr.String())
	}
	rows := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(rows) != 4 || !strings.Contains(rows[3], want) || strings.Contains(rows[1], "value=") {
		t.Errorf("the table does not show the truncation of the last letter only:\n%s", stdout.String())
	}
}
