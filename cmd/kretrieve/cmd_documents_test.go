// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// testFollower is a docfeed Follower running in this process on its own
// index directory, serving docfeed.Handler as a worker's --health-listen
// does.
type testFollower struct {
	*docfeed.Follower
	url string
	dir string
	// pause stops applying the topic; the status is still served.
	pause func()
	// stop stops applying, serving and closes the index.
	stop func()
}

// startFollower starts a Follower named name on dir, following the
// documents topic of the broker env names, stopped by t.Cleanup or stop.
func startFollower(t *testing.T, env func(string) string, name, dir string) *testFollower {
	t.Helper()
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(noop.NewTracerProvider()), kafkatrace.WithConsumerGroup(name))
	f, err := docfeed.New(t.Context(), docfeed.Config{Topic: messages.DefaultDocumentsTopic, Name: name, Dir: dir}, tracer,
		[]kgo.Opt{kgo.SeedBrokers(env("KRETRIEVE_BROKERS"))}, docfeed.WithLogger(slog.New(slog.NewTextHandler(&syncbuf.Buffer{}, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(docfeed.Handler(f))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var paused, stopped sync.Once
	pause := func() {
		paused.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s: Run: %v", name, err)
			}
		})
	}
	stop := func() {
		stopped.Do(func() {
			pause()
			srv.Close()
			if err := f.Close(); err != nil {
				t.Errorf("%s: Close: %v", name, err)
			}
		})
	}
	t.Cleanup(stop)
	ready, cancelReady := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancelReady()
	if err := f.WaitReady(ready); err != nil {
		t.Fatalf("%s: not ready: %v (%v)", name, err, f.Ready())
	}
	return &testFollower{Follower: f, url: srv.URL, dir: dir, pause: pause, stop: stop}
}

// verify runs kretrieve documents verify with args.
func verify(t *testing.T, env func(string) string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runIO(t.Context(), append([]string{"documents", "verify"}, args...), env, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// verifyJSON runs documents verify --json with args and returns its lines.
func verifyJSON(t *testing.T, env func(string) string, args ...string) ([]workerCheck, error) {
	t.Helper()
	stdout, stderr, err := verify(t, env, append(args, "--json")...)
	var checks []workerCheck
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var c workerCheck
		if derr := dec.Decode(&c); derr != nil {
			t.Fatalf("--json: %v\n%s%s", derr, stdout, stderr)
		}
		checks = append(checks, c)
	}
	return checks, err
}

// row returns the table row of worker in verify's output.
func row(out, worker string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, worker+" ") {
			return l
		}
	}
	return ""
}

// endOffsets returns the end offset of every partition of topic.
func endOffsets(t *testing.T, client *kgo.Client, topic string) map[int32]int64 {
	t.Helper()
	listed, err := kadm.NewClient(client).ListEndOffsets(t.Context(), topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends
}

// caughtUp reports whether a follower's status is at ends on every
// partition (a partition it has no offset for is at 0).
func caughtUp(st docfeed.Status, ends map[int32]int64) bool {
	for p, e := range ends {
		if st.Offsets[p] != e {
			return false
		}
	}
	return true
}

// documentsLines is a JSONL corpus for the documents topic.
func documentsLines(ids ...string) string {
	var lines []string
	for _, id := range ids {
		lines = append(lines, `{"id":"`+id+`","title":"`+id+`","body":"the body of `+id+`"}`)
	}
	return strings.Join(lines, "\n")
}

// TestDocumentsVerifyVerdicts: two followers of a topic match it, and a
// record that is not a document, skipped by the workers, is skipped by
// verify too; a follower that stopped applying, still serving its status,
// is behind once the topic changes, also after --catch-up-timeout; a
// follower whose index was changed behind its back is a MISMATCH once it
// has caught up; a worker that does not answer is unreachable. Each line
// says so in the table and in --json, and the command exits non-zero
// unless every worker matches.
func TestDocumentsVerifyVerdicts(t *testing.T) {
	env, client := ingestFixture(t)
	topic := messages.DefaultDocumentsTopic
	if _, stderr, err := ingest(t, env, documentsLines("alpha", "beta", "gamma", "delta"), "--jsonl", "-"); err != nil {
		t.Fatalf("ingest: %v\n%s", err, stderr)
	}
	if _, err := kadm.NewClient(client).CreateTopic(t.Context(), 1, -1, nil, messages.DLQTopic(topic)); err != nil {
		t.Fatal(err)
	}
	// A foreign producer's record whose value is not a document: the
	// workers dead-letter it and keep beta as it was.
	if err := client.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Key: []byte("beta"), Value: []byte("not json")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a := startFollower(t, env, "retrieval", filepath.Join(root, "a"))
	b := startFollower(t, env, "enrichment", filepath.Join(root, "b"))

	stdout, stderr, err := verify(t, env, "--worker", a.url, "--worker", b.url+"/")
	if err != nil {
		t.Fatalf("verify: %v\n%s%s", err, stdout, stderr)
	}
	for _, f := range []*testFollower{a, b} {
		if r := row(stdout, f.url); !strings.HasSuffix(r, " match") || !strings.Contains(r, " true ") {
			t.Errorf("%s: row %q, want ready and a match:\n%s", f.url, r, stdout)
		}
	}
	if !strings.Contains(stdout, "topic retrieval.documents: end offsets ") || !strings.Contains(stdout, ", 4 documents, digest "+a.Index().Digest().String()) {
		t.Errorf("topic line:\n%s", stdout)
	}
	checks, err := verifyJSON(t, env, "--worker", a.url, "--worker", b.url)
	if err != nil || len(checks) != 2 {
		t.Fatalf("--json: %v %+v", err, checks)
	}
	for _, c := range checks {
		if c.Verdict != verdictMatch || c.Digest != c.TopicDigest || c.Behind != 0 || !caughtUp(docfeed.Status{Offsets: c.Offsets}, c.Ends) || c.Documents != 4 {
			t.Errorf("--json: %+v", c)
		}
	}

	// b stops applying; the topic changes (epsilon is new, and ingest
	// publishes beta again over the foreign record): b is 2 records
	// behind, a matches.
	b.pause()
	if _, stderr, err := ingest(t, env, documentsLines("alpha", "beta", "gamma", "delta", "epsilon"), "--jsonl", "-"); err != nil {
		t.Fatalf("ingest: %v\n%s", err, stderr)
	}
	ends := endOffsets(t, client, topic)
	poll.Until(t, 10*time.Second, func() bool { return caughtUp(a.Status(), ends) }, "a applies the new document")
	stdout, stderr, err = verify(t, env, "--worker", a.url, "--worker", b.url)
	if err == nil || !strings.Contains(err.Error(), "documents verify: 1 behind of 2 workers") {
		t.Errorf("verify with a worker behind: %v\n%s%s", err, stdout, stderr)
	}
	if r := row(stdout, a.url); !strings.HasSuffix(r, " match") {
		t.Errorf("a: %q\n%s", r, stdout)
	}
	if r := row(stdout, b.url); !strings.HasSuffix(r, " behind 2 records") {
		t.Errorf("b: %q, want behind 2 records\n%s", r, stdout)
	}
	stdout, _, err = verify(t, env, "--worker", a.url, "--worker", b.url, "--catch-up-timeout", "300ms")
	if err == nil || !strings.Contains(err.Error(), "documents verify: 1 behind of 2 workers") || !strings.HasSuffix(row(stdout, b.url), " behind 2 records") {
		t.Errorf("--catch-up-timeout with a worker that stays behind: %v\n%s", err, stdout)
	}

	// b's index gains a document behind its back; b restarts and catches
	// up: its offsets are the topic's ends, its digest is not the topic's.
	b.stop()
	ix, err := search.OpenWritable(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	extra := search.Document{ID: "intruder", Title: "intruder", Source: corpus.JSONLSource}
	if _, err := ix.Apply(t.Context(), []search.Change{{ID: extra.ID, Doc: &extra}}, ix.Position()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	b = startFollower(t, env, "enrichment", b.dir)
	dead := httptest.NewServer(nil)
	dead.Close()
	stdout, stderr, err = verify(t, env, "--worker", a.url, "--worker", b.url, "--worker", dead.URL)
	if err == nil || !strings.Contains(err.Error(), "documents verify: 1 MISMATCH, 1 unreachable of 3 workers") {
		t.Errorf("verify with a changed index and a dead worker: %v\n%s%s", err, stdout, stderr)
	}
	if r := row(stdout, a.url); !strings.HasSuffix(r, " match") {
		t.Errorf("a: %q\n%s", r, stdout)
	}
	if r := row(stdout, b.url); !strings.Contains(r, " MISMATCH: at the topic's end offsets, the digests differ") || !strings.Contains(r, " 6 ") {
		t.Errorf("b: %q, want a MISMATCH with 6 documents\n%s", r, stdout)
	}
	if r := row(stdout, dead.URL); !strings.Contains(r, " unreachable: ") {
		t.Errorf("dead worker: %q\n%s", r, stdout)
	}
	checks, err = verifyJSON(t, env, "--worker", b.url)
	if err == nil || len(checks) != 1 || checks[0].Verdict != verdictMismatch || !caughtUp(docfeed.Status{Offsets: checks[0].Offsets}, checks[0].Ends) {
		t.Errorf("--json: %v %+v", err, checks)
	}
}

// TestDocumentsVerifyURLs: verify refuses to run without a worker or with
// a worker that is not an http(s) URL, and names the flag; the variable
// takes comma-separated URLs.
func TestDocumentsVerifyURLs(t *testing.T) {
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": "127.0.0.1:1"})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "worker: at least one --worker URL is required"},
		{[]string{"--worker", "10.0.0.5:8081"}, `worker "10.0.0.5:8081": not an http:// or https:// URL`},
		{[]string{"--worker", "ftp://host/"}, `worker "ftp://host/": not an http:// or https:// URL`},
		{[]string{"--worker", "http://h:1", "--catch-up-timeout", "-1s"}, "catch-up-timeout: must not be negative"},
	} {
		if _, _, err := verify(t, env, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	var c verifyConfig
	s := newSettings(pflag.NewFlagSet("verify", pflag.ContinueOnError), mapEnv(map[string]string{"KRETRIEVE_WORKER": "http://a:8081, http://b:8081/"}))
	check := c.flags(s)
	if err := check(nil); err != nil || len(c.workers) != 2 || c.workers[0] != "http://a:8081" || c.workers[1] != "http://b:8081" {
		t.Errorf("KRETRIEVE_WORKER: %q %v", c.workers, err)
	}
}

// followerServer runs a documents follower on dir against brokers and
// serves its /v1/index; stop stops it.
func followerServer(t *testing.T, brokers, dir string) (url string, stop func()) {
	t.Helper()
	f := startFollower(t, mapEnv(map[string]string{"KRETRIEVE_BROKERS": brokers}), "test", dir)
	return f.url, f.stop
}

// verifyOutput runs kretrieve documents verify with args and returns its
// stdout and stderr together.
func verifyOutput(t *testing.T, env func(string) string, args ...string) (string, error) {
	t.Helper()
	stdout, stderr, err := verify(t, env, args...)
	return stdout + stderr, err
}

// TestDocumentsVerify: workers at the topic's end with its documents
// match; a worker stopped while the topic changed is behind; a worker
// whose index was changed behind the topic's back is a mismatch; an
// unreachable worker fails the command too.
func TestDocumentsVerify(t *testing.T) {
	env, _ := ingestFixture(t)
	brokers := env("KRETRIEVE_BROKERS")
	if _, _, err := ingest(t, env, `{"id":"a","title":"A","body":"alpha"}`+"\n"+`{"id":"b","title":"B","body":"beta"}`, "--jsonl", "-"); err != nil {
		t.Fatal(err)
	}
	dirA, dirB := t.TempDir()+"/a", t.TempDir()+"/b"
	urlA, _ := followerServer(t, brokers, dirA)
	urlB, stopB := followerServer(t, brokers, dirB)
	out, err := verifyOutput(t, env, "--worker", urlA, "--worker", urlB)
	if err != nil || strings.Count(out, "match") != 2 || !strings.Contains(out, "2 documents") {
		t.Fatalf("two current workers: %v\n%s", err, out)
	}

	// B stops; the topic changes; B is behind until it runs again.
	stopB()
	if _, _, err := ingest(t, env, "", "--delete", "a"); err != nil {
		t.Fatal(err)
	}
	out, err = verifyOutput(t, env, "--worker", urlA, "--worker", urlB)
	if err == nil || !strings.Contains(out, "unreachable") {
		t.Fatalf("a stopped worker: %v\n%s", err, out)
	}
	// B's index is changed behind the topic's back, then B starts again
	// and catches up: at the topic's end, but with a document too many.
	ix, err := search.OpenWritable(dirB)
	if err != nil {
		t.Fatal(err)
	}
	extra := search.Document{ID: "intruder", Title: "not on the topic", Body: "x"}
	if _, err := ix.Apply(t.Context(), []search.Change{{ID: extra.ID, Doc: &extra}}, ix.Position()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	urlB, _ = followerServer(t, brokers, dirB)
	out, err = verifyOutput(t, env, "--worker", urlA, "--worker", urlB, "--catch-up-timeout", "10s")
	if err == nil || !strings.Contains(out, "MISMATCH") || !strings.Contains(err.Error(), "1 MISMATCH of 2 workers") {
		t.Fatalf("a changed index: %v\n%s", err, out)
	}
	if !strings.Contains(out, "1 documents") {
		t.Errorf("the topic's state after the delete: want 1 document\n%s", out)
	}
}

// TestDocumentsVerifyFlags: --worker is required and must be a URL.
func TestDocumentsVerifyFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "at least one --worker"},
		{[]string{"--worker", "127.0.0.1:8081"}, "http:// or https://"},
		{[]string{"--worker", "http://x", "--catch-up-timeout", "-1s"}, "catch-up-timeout: must not be negative"},
	} {
		if _, err := load[verifyConfig]([]string{"documents", "verify"}, c.args, mapEnv(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want it to mention %q", c.args, err, c.want)
		}
	}
}
