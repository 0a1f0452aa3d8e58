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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
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

// runChild runs one worker of role in this process until SIGTERM, exporting
// its spans over OTLP (OTEL_* from the parent), like `kretrieve retrieval`.
func runChild(role string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	metrics := kafkatrace.NewMetrics()
	p, err := tracing.Setup(ctx, tracing.WithServiceName("kretrieve-test-"+role), tracing.WithMetricProducer(metrics))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	idx, err := search.DemoIndex()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer idx.Close()
	cfg := pipeline.Config{
		Kafka:          kafkaclient.Config{Brokers: kafkaclient.ParseBrokers(os.Getenv("KRETRIEVE_BROKERS")), ClientID: "test"},
		Logger:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		TracerProvider: p.TracerProvider, MeterProvider: p.MeterProvider, Propagator: p.Propagator,
		Metrics: metrics, ParentBasedSampling: p.ParentBasedSampling,
	}
	w, err := pipeline.NewRetrievalWorker(cfg, idx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("ready")
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
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("child did not start: %q %v\n%s", line, err, c.stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
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
