// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/corpus/corpustest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/tracing"
)

// childEnv names the role a re-executed test binary plays as a separate
// worker process (see startChild).
const childEnv = "KRETRIEVE_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	os.Exit(m.Run())
}

// runChild runs one worker of role (a stage's name) in this process until
// SIGTERM, exporting its spans over OTLP (OTEL_* from the parent), like
// `kretrieve retrieval`; its group settings come from the environment (see
// childGroupSettings).
// With heapEveryEnv set it also reports its Go heap on stdout.
func runChild(role string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	metrics := kafkatrace.NewMetrics()
	p, err := tracing.Setup(ctx, tracing.WithServiceName("kretrieve-test-"+role), tracing.WithMetricProducer(tracing.NewMetricsProducer(metrics)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	idx, err := corpustest.DemoIndex()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer idx.Close()
	cfg := pipeline.Config{
		Kafka:               kafkaclient.Config{Brokers: kafkaclient.ParseBrokers(os.Getenv("KRETRIEVE_BROKERS")), ClientID: "test"},
		ParentBasedSampling: p.ParentBasedSampling,
		Worker:              childGroupSettings(),
	}
	pl, err := pipeline.New(cfg, pipeline.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		pipeline.WithTracerProvider(p.TracerProvider), pipeline.WithMeterProvider(p.MeterProvider), pipeline.WithPropagator(p.Propagator),
		pipeline.WithMetrics(metrics))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	w, err := pl.NewWorker(role, idx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
	if every, perr := time.ParseDuration(os.Getenv(heapEveryEnv)); perr == nil && every > 0 {
		reportHeap(ctx, every)
	}
	err = w.Run(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := p.Shutdown(sctx); serr != nil || err != nil {
		fmt.Fprintln(os.Stderr, err, serr)
		return 1
	}
	if st := p.Stats(); st.Dropped != 0 {
		fmt.Fprintf(os.Stderr, "dropped %d spans\n", st.Dropped)
		return 1
	}
	return 0
}

// heapEveryEnv, set to a duration (such as "200ms") in a child's
// environment, makes the child report its Go heap on stdout after "ready"
// (see reportHeap). The tests run under -race, whose shadow memory inflates
// RSS but not the Go heap, so memory bounds are asserted on the heap.
const heapEveryEnv = "KRETRIEVE_TEST_HEAP_EVERY"

// reportHeap prints the Go heap as "heap <live> <objects>": live is
// /gc/heap/live:bytes (the objects the last GC found reachable), objects is
// /memory/classes/heap/objects:bytes (live objects plus garbage not yet
// swept). The first line is printed at once after a forced GC, before the
// worker runs (its baseline); then a line every interval until ctx is done.
func reportHeap(ctx context.Context, every time.Duration) {
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	report := func() {
		metrics.Read(samples)
		fmt.Printf("heap %d %d\n", samples[0].Value.Uint64(), samples[1].Value.Uint64())
	}
	runtime.GC()
	report()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for range t.C {
			if ctx.Err() != nil {
				return // the worker is shutting down
			}
			report()
		}
	}()
}

// child is a worker running as a separate process.
type child struct {
	cmd    *exec.Cmd
	stderr strings.Builder
	done   chan error
}

// startChild starts this test binary as a separate retrieval worker process
// connected to brokers, exporting spans to otlpEndpoint, and waits until it
// runs.
func startChild(t *testing.T, brokers, otlpEndpoint string) *child {
	t.Helper()
	return startChildWith(t, brokers, otlpEndpoint, nil, nil)
}

// startChildWith is startChild with extra environment variables (they win
// over the defaults) and, when lines is not nil, calls lines from another
// goroutine with every line the child prints on stdout after "ready".
func startChildWith(t *testing.T, brokers, otlpEndpoint string, env []string, lines func(string)) *child {
	t.Helper()
	c := &child{done: make(chan error, 1)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(),
		childEnv+"=retrieval",
		"KRETRIEVE_BROKERS="+brokers,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlpEndpoint,
		"OTEL_METRICS_EXPORTER=none",
		// tracing.Setup's batch defaults (a 64k-span queue): the SDK's own
		// 2048-span queue dropped spans here at full speed under -race; a
		// loss is counted and fails the child (exit 1), never unnoticed.
		"OTEL_BSP_SCHEDULE_DELAY=20",
	)
	c.cmd.Env = append(c.cmd.Env, env...)
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.done
		c.done <- nil
	})
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("child did not start: %q %v\n%s", line, err, c.stderr.String())
	}
	if lines == nil {
		go func() { _, _ = io.Copy(io.Discard, br) }()
		return c
	}
	go func() {
		sc := bufio.NewScanner(br)
		for sc.Scan() {
			lines(sc.Text())
		}
		_, _ = io.Copy(io.Discard, br)
	}()
	return c
}

// wait waits for the child to exit and returns its error.
func (c *child) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(timeout):
		t.Fatalf("child still running after %v", timeout)
		return nil
	}
}
