// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
)

// lineSignal is a stderr that keeps what is written (syncbuf.Buffer) and closes
// seen the first time a write contains want.
type lineSignal struct {
	syncbuf.Buffer
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
	return w.Buffer.Write(p)
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
	// While it waits, the gateway is alive but not ready: probes get an
	// answer, traffic is refused with a reason.
	for path, want := range map[string]int{"/healthz": http.StatusOK, "/readyz": http.StatusServiceUnavailable, "/v1/search": http.StatusServiceUnavailable} {
		method := map[bool]string{true: http.MethodPost, false: http.MethodGet}[path == "/v1/search"]
		req, _ := http.NewRequest(method, "http://"+httpAddr+path, strings.NewReader(`{"query":"q"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s while waiting for the broker: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s while waiting for the broker: %d %s, want %d", path, resp.StatusCode, body, want)
		}
		if path == "/readyz" && !strings.Contains(string(body), "waiting for kafka at "+brokers) {
			t.Errorf("GET /readyz while waiting: %s, want the reason", body)
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
