package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/search"
)

// followerServer runs a documents follower on dir against brokers and
// serves its /v1/index; stop stops it.
func followerServer(t *testing.T, brokers, dir string) (url string, stop func()) {
	t.Helper()
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(noop.NewTracerProvider()))
	f, err := docfeed.New(t.Context(), docfeed.Config{Name: "test", Dir: dir}, tracer, []kgo.Opt{kgo.SeedBrokers(brokers)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer wcancel()
	if err := f.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(docfeed.Handler(f))
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	return srv.URL, stop
}

// verify runs kretrieve documents verify with args.
func verify(t *testing.T, env func(string) string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runIO(t.Context(), append([]string{"documents", "verify"}, args...), env, strings.NewReader(""), &out, &errOut)
	return out.String() + errOut.String(), err
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
	out, err := verify(t, env, "--worker", urlA, "--worker", urlB)
	if err != nil || strings.Count(out, "match") != 2 || !strings.Contains(out, "2 documents") {
		t.Fatalf("two current workers: %v\n%s", err, out)
	}

	// B stops; the topic changes; B is behind until it runs again.
	stopB()
	if _, _, err := ingest(t, env, "", "--delete", "a"); err != nil {
		t.Fatal(err)
	}
	out, err = verify(t, env, "--worker", urlA, "--worker", urlB)
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
	out, err = verify(t, env, "--worker", urlA, "--worker", urlB, "--catch-up-timeout", "10s")
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
