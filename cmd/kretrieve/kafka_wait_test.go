package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker"
)

// lineSignal is a stderr that keeps what is written (lagOutput) and closes
// seen the first time a write contains want.
type lineSignal struct {
	lagOutput
	want string
	once sync.Once
	seen chan struct{}
}

func newLineSignal(want string) *lineSignal {
	return &lineSignal{want: want, seen: make(chan struct{})}
}

func (w *lineSignal) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.want)) {
		w.once.Do(func() { close(w.seen) })
	}
	return w.lagOutput.Write(p)
}

// TestLongRunningCommandsWaitForTheBroker: workers and the gateway started
// before their broker log that they retry, the gateway is not ready, and
// once a broker listens on the address they start working by themselves
// (issue 14, finding 4: they used to exit in 30 ms with "create topics:
// unable to dial"). The broker starts on the event of every command's
// first retry record.
func TestLongRunningCommandsWaitForTheBroker(t *testing.T) {
	brokers, httpAddr := freeAddr(t), freeAddr(t)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": brokers, "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t), "KRETRIEVE_HTTP_LISTEN": httpAddr})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	retrying := "kafka not reachable at " + brokers + ", retrying in "
	stderrs := map[string]*lineSignal{}
	for _, cmd := range []string{"retrieval", "enrichment", "gateway"} {
		stderr := newLineSignal(retrying)
		stderrs[cmd] = stderr
		wg.Go(func() {
			if err := run(ctx, []string{cmd}, env, &bytes.Buffer{}, stderr); err != nil {
				t.Errorf("%s: %v\n%s", cmd, err, stderr.String())
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for cmd, stderr := range stderrs {
		select {
		case <-stderr.seen:
		case <-t.Context().Done():
			t.Fatalf("%s logged no retry:\n%s", cmd, stderr.String())
		}
	}
	if resp, err := http.Get("http://" + httpAddr + "/readyz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the gateway is ready without a broker")
		}
	}

	b, err := broker.Start(broker.Config{Listen: brokers, DefaultPartitions: 3})
	if err != nil {
		t.Fatalf("start the broker on %s: %v", brokers, err)
	}
	t.Cleanup(b.Close)
	waitReady(t, httpAddr)
	// The workers answer: a request through them completes.
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"produce", "--wait", "--timeout", "30s", "parse the query string"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("produce --wait: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "url") {
		t.Fatalf("produce --wait printed no result with the url document:\n%s", stdout.String())
	}
}

// TestOneShotCommandsFailWithoutABroker: commands that do one job fail
// within a few seconds with one error naming the brokers and how to change
// them, and log no retries at the default level.
func TestOneShotCommandsFailWithoutABroker(t *testing.T) {
	brokers := freeAddr(t)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": brokers})
	for _, args := range [][]string{{"produce", "a query"}, {"lag"}} {
		t.Run(args[0], func(t *testing.T) {
			var stderr bytes.Buffer
			start := time.Now()
			err := run(t.Context(), args, env, &bytes.Buffer{}, &stderr)
			took := time.Since(start)
			if err == nil {
				t.Fatal("succeeded without a broker")
			}
			for _, want := range []string{"kafka " + brokers + ": no broker answered", "KRETRIEVE_BROKERS"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q lacks %q", err, want)
				}
			}
			if took > 6*time.Second {
				t.Errorf("failed after %s: not within a few seconds", took)
			}
			if strings.Contains(stderr.String(), "retrying") {
				t.Errorf("logged retries:\n%s", stderr.String())
			}
		})
	}
}
