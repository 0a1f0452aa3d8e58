// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// ingestFixture starts a broker whose topics get 3 partitions and returns
// the environment of the commands and a plain client on it.
func ingestFixture(t *testing.T) (func(string) string, *kgo.Client) {
	t.Helper()
	b := brokertest.NewBroker(t, 3)
	client, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_PARTITIONS": "3"}), client
}

// ingest runs kretrieve ingest with args and stdin, returning its output.
func ingest(t *testing.T, env func(string) string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runIO(t.Context(), append([]string{"ingest"}, args...), env, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

// topicRecords reads every record of topic, in offset order per partition,
// up to its end offsets; none when the topic does not exist.
func topicRecords(t *testing.T, client *kgo.Client, topic string) []*kgo.Record {
	t.Helper()
	// A client of its own: client's metadata may still say that the
	// topic does not exist.
	seeds := kgo.SeedBrokers(client.OptValue(kgo.SeedBrokers).([]string)...)
	admin, err := kgo.NewClient(seeds)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ends, err := kadm.NewClient(admin).ListEndOffsets(t.Context(), topic)
	if err == nil && errors.Is(ends.Error(), kerr.UnknownTopicOrPartition) {
		return nil
	}
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets of %s: %v %v", topic, err, ends.Error())
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	if want == 0 {
		return nil
	}
	c, err := kgo.NewClient(seeds, kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []*kgo.Record
	for int64(len(got)) < want {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read %s: %d of %d records: %v", topic, len(got), want, err)
		}
		got = append(got, fs.Records()...)
	}
	return got
}

// header returns r's header key, and whether it has one.
func header(r *kgo.Record, key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// checkPublished checks that a document record carries a valid
// traceparent, a pathway header and the hash of its value.
func checkPublished(t *testing.T, r *kgo.Record) {
	t.Helper()
	tp, _ := header(r, tracecontext.TraceparentHeader)
	if sc, ok := tracecontext.ParseTraceparent(tp); !ok || !sc.IsValid() {
		t.Errorf("%s: traceparent %q", r.Key, tp)
	}
	pw, ok := header(r, pathway.HeaderKey)
	if pc, err := pathway.Decode([]byte(pw), time.Now().UnixNano()); !ok || err != nil || !pc.IsValid() {
		t.Errorf("%s: pathway header %q: %v", r.Key, pw, err)
	}
	d, err := corpus.ParseDocument(r.Value)
	if err != nil || d.ID != string(r.Key) {
		t.Fatalf("%s: value %.80s: %v", r.Key, r.Value, err)
	}
	if h, _ := header(r, messages.HeaderDocumentHash); h != d.Hash() {
		t.Errorf("%s: hash header %q, value's hash %s", r.Key, h, d.Hash())
	}
}

func keys(rs []*kgo.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Key))
	}
	return out
}

// TestIngestCommand: bad lines are reported with their numbers and skipped
// (exit non-zero, saying how many), the good ones published with trace
// context, pathway and hash headers to a compacted topic; --strict
// publishes nothing; an unchanged document is not published again, a
// changed one is; --delete publishes a tombstone for an id the topic
// holds and nothing for one it does not.
func TestIngestCommand(t *testing.T) {
	env, client := ingestFixture(t)
	topic := messages.DefaultDocumentsTopic
	good := []string{
		`{"id":"zip","title":"archive/zip","body":"Read and write ZIP archives.","url":"https://pkg.go.dev/archive/zip","metadata":{"team":"go"}}`,
		`{"id":"url","title":"net/url.ParseQuery","body":"ParseQuery parses the URL-encoded query string."}`,
		`{"id":"sha","title":"crypto/sha256.Sum256","body":"Sum256 returns the SHA256 checksum of the data.","kind":"func","import_path":"crypto/sha256"}`,
	}
	huge := `{"id":"huge","body":"` + strings.Repeat("h", messages.MaxDocumentBytes) + `"}`
	mixed := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(mixed, []byte(strings.Join([]string{good[0], `not json`, good[1], `{"title":"no id"}`, huge, good[2]}, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := ingest(t, env, "", "--jsonl", mixed, "--strict")
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "nothing published") {
		t.Fatalf("--strict: %v\n%s%s", err, stdout, stderr)
	}
	if rs := topicRecords(t, client, topic); len(rs) != 0 {
		t.Fatalf("--strict published %d records", len(rs))
	}

	stdout, stderr, err = ingest(t, env, "", "--jsonl", mixed)
	if err == nil || !strings.Contains(err.Error(), "3 documents refused") {
		t.Fatalf("bad lines: err %v\n%s%s", err, stdout, stderr)
	}
	for _, want := range []string{"line 2: invalid json", "line 4: missing id", "line 5: document too large"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "ingest: 6 documents to retrieval.documents: 3 published, 0 unchanged, 3 refused, 0 deleted") {
		t.Errorf("summary:\n%s", stdout)
	}
	rs := topicRecords(t, client, topic)
	if len(rs) != 3 {
		t.Fatalf("published %v, want the 3 good documents", keys(rs))
	}
	for _, r := range rs {
		checkPublished(t, r)
	}
	rcs, err := kadm.NewClient(client).DescribeTopicConfigs(t.Context(), topic)
	if err != nil || len(rcs) != 1 {
		t.Fatal(err)
	}
	if c, err := rcs[0].Configs, rcs[0].Err; err != nil || !strings.Contains(configValue(c, kafkaclient.CleanupPolicy), "compact") {
		t.Errorf("topic cleanup.policy %q, %v", configValue(c, kafkaclient.CleanupPolicy), err)
	}

	// Again, from stdin: nothing changed, nothing published.
	stdout, stderr, err = ingest(t, env, strings.Join(good, "\n")+"\n", "--jsonl", "-")
	if err != nil || !strings.Contains(stdout, "3 documents to retrieval.documents: 0 published, 3 unchanged, 0 refused") {
		t.Fatalf("unchanged: %v\n%s%s", err, stdout, stderr)
	}
	if rs := topicRecords(t, client, topic); len(rs) != 3 {
		t.Fatalf("unchanged ingest published: %v", keys(rs))
	}

	changed := []string{good[0], strings.Replace(good[1], "query string", "query string and returns a map", 1), good[2]}
	stdout, stderr, err = ingest(t, env, strings.Join(changed, "\n"), "--jsonl", "-")
	if err != nil || !strings.Contains(stdout, "1 published, 2 unchanged") {
		t.Fatalf("one changed: %v\n%s%s", err, stdout, stderr)
	}
	rs = topicRecords(t, client, topic)
	if len(rs) != 4 {
		t.Fatalf("one changed document published %v", keys(rs))
	}
	last := latest(rs, "url")
	checkPublished(t, last)
	if !strings.Contains(string(last.Value), "returns a map") {
		t.Fatalf("latest url: %s", last.Value)
	}

	stdout, stderr, err = ingest(t, env, "", "--delete", "url", "--delete", "nosuch")
	if err != nil || !strings.Contains(stdout, "0 documents to retrieval.documents: 0 published, 0 unchanged, 0 refused, 1 deleted, 1 deletes of ids not in the topic") ||
		!strings.Contains(stderr, `delete "nosuch": not in retrieval.documents, nothing published`) {
		t.Fatalf("delete: %v\n%s%s", err, stdout, stderr)
	}
	rs = topicRecords(t, client, topic)
	if len(rs) != 5 || latest(rs, "url").Value != nil {
		t.Fatalf("after delete: %v, latest url %q", keys(rs), latest(rs, "url").Value)
	}
	if tp, _ := header(latest(rs, "url"), tracecontext.TraceparentHeader); tp == "" {
		t.Error("the tombstone has no traceparent")
	}
	// Deleted: deleting again publishes nothing, publishing again does.
	stdout, _, err = ingest(t, env, "", "--delete", "url")
	if err != nil || !strings.Contains(stdout, "0 deleted, 1 deletes of ids not in the topic") || len(topicRecords(t, client, topic)) != 5 {
		t.Fatalf("delete again: %v\n%s", err, stdout)
	}
	stdout, _, err = ingest(t, env, strings.Join(changed, "\n"), "--jsonl", "-")
	if err != nil || !strings.Contains(stdout, "1 published, 2 unchanged") || len(topicRecords(t, client, topic)) != 6 {
		t.Fatalf("publish after delete: %v\n%s", err, stdout)
	}
}

// latest returns the last record of key among rs (one partition holds
// every record of a key, in offset order).
func latest(rs []*kgo.Record, key string) *kgo.Record {
	var last *kgo.Record
	for _, r := range rs {
		if string(r.Key) == key {
			last = r
		}
	}
	if last == nil {
		return &kgo.Record{}
	}
	return last
}

func configValue(cs []kadm.Config, key string) string {
	for _, c := range cs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return ""
}

// TestIngestReadsForeignRecords: records other producers wrote count by
// their value's hash when they carry no well-formed hash header; a value
// that is not a valid document, a record without a key and a tombstone
// never make a document unchanged.
func TestIngestReadsForeignRecords(t *testing.T) {
	env, client := ingestFixture(t)
	topic := messages.DefaultDocumentsTopic
	if err := kafkaclient.EnsureCompactedTopics(t.Context(), client, kafkaclient.Config{Partitions: 3}, topic); err != nil {
		t.Fatal(err)
	}
	docs := []search.Document{
		{ID: "plain", Title: "Plain", Source: corpus.JSONLSource},
		{ID: "badhash", Title: "Bad hash", Source: corpus.JSONLSource},
		{ID: "invalid", Title: "Invalid", Source: corpus.JSONLSource},
		{ID: "gone", Title: "Gone", Source: corpus.JSONLSource},
	}
	var lines []string
	value := map[string][]byte{}
	for _, d := range docs {
		v, err := corpus.EncodeDocument(d)
		if err != nil {
			t.Fatal(err)
		}
		value[d.ID] = v
		lines = append(lines, string(v))
	}
	err := client.ProduceSync(t.Context(),
		&kgo.Record{Topic: topic, Key: []byte("plain"), Value: value["plain"]},
		&kgo.Record{Topic: topic, Key: []byte("badhash"), Value: value["badhash"], Headers: []kgo.RecordHeader{{Key: messages.HeaderDocumentHash, Value: []byte("xyz")}}},
		&kgo.Record{Topic: topic, Key: []byte("invalid"), Value: []byte(`{"id":"invalid"}`)},
		&kgo.Record{Topic: topic, Key: []byte("gone"), Value: value["gone"]},
		&kgo.Record{Topic: topic, Key: []byte("gone")},
		&kgo.Record{Topic: topic, Value: value["plain"]},
	).FirstErr()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := ingest(t, env, strings.Join(lines, "\n"), "--jsonl", "-")
	if err != nil || !strings.Contains(stdout, "4 documents to retrieval.documents: 2 published, 2 unchanged") {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	rs := topicRecords(t, client, topic)
	if len(rs) != 8 {
		t.Fatalf("%d records, want the 6 foreign ones and 2 published", len(rs))
	}
	for _, k := range []string{"invalid", "gone"} {
		checkPublished(t, latest(rs, k))
	}
}

// TestIngestRefusesADeletePolicyTopic: an existing documents topic that is
// not compacted is an error naming it and the fix, and nothing is
// published.
func TestIngestRefusesADeletePolicyTopic(t *testing.T) {
	env, client := ingestFixture(t)
	if err := kafkaclient.EnsureTopics(t.Context(), client, kafkaclient.Config{Partitions: 1}, "docs"); err != nil {
		t.Fatal(err)
	}
	_, _, err := ingest(t, env, `{"id":"a","title":"A"}`, "--jsonl", "-", "--topic-documents", "docs")
	if err == nil || !strings.Contains(err.Error(), "topic docs has cleanup.policy=delete, not compact") || !strings.Contains(err.Error(), "cleanup.policy=compact") {
		t.Fatalf("err = %v", err)
	}
	if rs := topicRecords(t, client, "docs"); len(rs) != 0 {
		t.Fatalf("published %v", keys(rs))
	}
}

// TestIngestGoCorpusTwice: by default the Go standard library docs are
// published, every one; a second ingest publishes none of them.
func TestIngestGoCorpusTwice(t *testing.T) {
	env, client := ingestFixture(t)
	start := time.Now()
	stdout, stderr, err := ingest(t, env, "")
	if err != nil || !strings.Contains(stdout, "refused, 0 deleted") || !strings.Contains(stdout, " 0 unchanged, 0 refused") {
		t.Fatalf("first: %v\n%s%s", err, stdout, stderr)
	}
	first := time.Since(start)
	rs := topicRecords(t, client, messages.DefaultDocumentsTopic)
	if len(rs) < 5000 || !strings.Contains(stdout, "ingest: "+strconv.Itoa(len(rs))+" documents to retrieval.documents: "+strconv.Itoa(len(rs))+" published") {
		t.Fatalf("%d records; summary %s", len(rs), stdout)
	}
	checkPublished(t, rs[0])
	start = time.Now()
	stdout, stderr, err = ingest(t, env, "")
	if err != nil || !strings.Contains(stdout, ": 0 published, "+strconv.Itoa(len(rs))+" unchanged") {
		t.Fatalf("second: %v\n%s%s", err, stdout, stderr)
	}
	t.Logf("%d documents: first ingest %s, second %s", len(rs), first.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if n := len(topicRecords(t, client, messages.DefaultDocumentsTopic)); n != len(rs) {
		t.Fatalf("second ingest published %d records", n-len(rs))
	}
}

// TestIngestFlags: the flags' checks and KRETRIEVE_DELETE's ids.
func TestIngestFlags(t *testing.T) {
	c, err := load[ingestConfig]([]string{"ingest"}, nil, mapEnv(map[string]string{"KRETRIEVE_DELETE": "a, b,,c"}))
	if err != nil || strings.Join(c.deletes, "|") != "a|b|c" || c.topics.Documents != messages.DefaultDocumentsTopic {
		t.Fatalf("deletes %q topic %q: %v", c.deletes, c.topics.Documents, err)
	}
	c, err = load[ingestConfig]([]string{"ingest"}, []string{"--delete", "x,y", "--delete", "z"}, mapEnv(map[string]string{"KRETRIEVE_DELETE": "a"}))
	if err != nil || strings.Join(c.deletes, "|") != "x,y|z" {
		t.Fatalf("flag over variable: %q %v", c.deletes, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--strict"}, "strict: only applies with --jsonl"},
		{[]string{"--delete", " "}, "delete"},
		{[]string{"--delete", strings.Repeat("i", messages.MaxDocumentIDBytes+1)}, "delete"},
		{[]string{"--topic-documents", "retrieval.requests"}, "requests and documents topics are both"},
		{[]string{"--topic-documents", "a/b"}, "documents topic"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		if _, err := load[ingestConfig]([]string{"ingest"}, tt.args, mapEnv(nil)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want it to mention %q", tt.args, err, tt.want)
		}
	}
	// A document both published and deleted is refused before anything
	// is published (no broker needed).
	_, _, err = ingest(t, mapEnv(map[string]string{"KRETRIEVE_BROKERS": "127.0.0.1:1"}), `{"id":"a","title":"A"}`, "--jsonl", "-", "--delete", "a")
	if err == nil || !strings.Contains(err.Error(), `delete "a": the document is also to be published`) {
		t.Fatalf("publish and delete: %v", err)
	}
	var stderr bytes.Buffer
	err = runIO(t.Context(), []string{"ingest", "--jsonl", filepath.Join(t.TempDir(), "missing.jsonl")}, mapEnv(nil), io.MultiReader(), io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestIngestProgress: on a terminal the progress line is redrawn in place
// with the counts, and erased when publishing ends.
func TestIngestProgress(t *testing.T) {
	buf := &syncbuf.Buffer{}
	p := &ingestPublisher{stderr: buf}
	p.counts.published.Store(2)
	p.counts.refused.Store(1)
	stop := p.showProgress(true, 5)
	stop()
	out := buf.String()
	if !strings.HasPrefix(out, "\r\x1b[Kingest: 3/5: 2 published, 0 unchanged, 1 refused") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Fatalf("progress %q", out)
	}
	buf = &syncbuf.Buffer{}
	p.stderr = buf
	p.showProgress(false, 5)()
	if buf.String() != "" {
		t.Fatalf("progress off a terminal: %q", buf.String())
	}
}
