// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// polledCounter is a kgo hook counting the records handed out by polls.
type polledCounter struct{ n atomic.Int64 }

func (c *polledCounter) OnFetchRecordUnbuffered(_ *kgo.Record, polled bool) {
	if polled {
		c.n.Add(1)
	}
}

// gatedWorker is a worker whose handler holds every record until the gate
// is opened, then outputs one record to out on the input's partition. A
// handler that finds its context cancelled when the gate opens fails, as a
// search or a call interrupted by the cancellation does.
type gatedWorker struct {
	w       *consumers.Worker
	polled  polledCounter
	entered atomic.Int64
	gate    chan struct{}
	log     string // the worker's log file
	cancel  context.CancelFunc
	done    chan error

	mu        sync.Mutex
	delivered map[[2]int64]int // (partition, offset) -> handler calls
}

func startGatedWorker(t *testing.T, addr, group, in, out string, commitTimeout time.Duration) *gatedWorker {
	t.Helper()
	g := &gatedWorker{gate: make(chan struct{}), done: make(chan error, 1), delivered: make(map[[2]int64]int),
		log: filepath.Join(t.TempDir(), "worker.log")}
	logFile, err := os.Create(g.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logFile.Close() })
	h := func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		g.mu.Lock()
		g.delivered[[2]int64{int64(msg.Record.Partition), msg.Record.Offset}]++
		g.mu.Unlock()
		g.entered.Add(1)
		select {
		case <-g.gate:
		case <-ctx.Done():
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return []*kgo.Record{{Topic: out, Partition: msg.Record.Partition, Value: msg.Record.Value}}, nil
	}
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(noop.NewTracerProvider()), kafkatrace.WithConsumerGroup(group))
	w, err := consumers.New(consumers.Config{Group: group, Topic: in, RetryBackoff: time.Millisecond, CommitTimeout: commitTimeout}, tracer, h,
		[]kgo.Opt{kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithHooks(&g.polled)},
		consumers.WithLogger(slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	g.w = w
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	go func() { g.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		g.open()
		<-g.done
		g.done <- nil
	})
	return g
}

// waitStopped waits until Run has returned, at most within.
func (g *gatedWorker) waitStopped(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-g.done:
		g.done <- err
		if err != nil {
			t.Fatalf("worker: %v", err)
		}
	case <-time.After(within):
		t.Fatalf("worker still running %v after its stop", within)
	}
}

func (g *gatedWorker) open() {
	select {
	case <-g.gate:
	default:
		close(g.gate)
	}
}

// TestStopFinishesTheBatch stops a worker (its context cancelled, as
// SIGTERM does) while a record of each partition is in its handler and the
// rest of the polled batch is queued. The stop finishes the batch: the
// handlers in flight are not cancelled, every polled record is processed
// once and its output acknowledged, every offset is committed, nothing is
// logged at error level, and a worker that takes over the group gets
// nothing again.
func TestStopFinishesTheBatch(t *testing.T) {
	const perPartition = 50
	e := newPartitionEnv(t, "stop.in", nil)
	e.produce(perPartition, 0, 1, 2, 3, 4, 5)
	g := startGatedWorker(t, e.addr, "stop", e.in, e.out, 0)
	// Each partition's first record is in its handler, and the client has
	// handed every record out to the worker (queued, or in the poll being
	// dispatched).
	poll.Until(t, 30*time.Second, func() bool {
		return g.entered.Load() == partitions && g.polled.n.Load() == partitions*perPartition
	}, "handlers entered %d of %d, records polled %d of %d", g.entered.Load(), partitions, g.polled.n.Load(), partitions*perPartition)

	g.cancel()
	g.open()
	g.waitStopped(t, time.Minute)

	missing, again := g.deliveries(perPartition)
	if missing > 0 || again > 0 {
		t.Errorf("of %d polled records, %d were not processed before the stop and %d were processed twice", partitions*perPartition, missing, again)
	}
	if got := g.w.Processed(); got != partitions*perPartition {
		t.Errorf("processed %d records, want %d", got, partitions*perPartition)
	}
	resp, err := e.adm.FetchOffsets(t.Context(), "stop")
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(partitions) {
		if o, _ := resp.Lookup(e.in, p); o.At != perPartition {
			t.Errorf("partition %d: committed %d at the stop, want %d", p, o.At, perPartition)
		}
	}
	if n := e.count(e.out); n != partitions*perPartition {
		t.Errorf("%d outputs, want one per record: %d", n, partitions*perPartition)
	}
	g.checkLogged(t, "level=ERROR", "context canceled")

	// Redeliveries: the group's next member gets only new records.
	var (
		mu          sync.Mutex
		redelivered []int64
		fresh       atomic.Int64
	)
	e.run("stop", func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		mu.Lock()
		defer mu.Unlock()
		if msg.Record.Offset < perPartition {
			redelivered = append(redelivered, msg.Record.Offset)
		} else {
			fresh.Add(1)
		}
		return nil, nil
	})
	e.produce(1, 0, 1, 2, 3, 4, 5)
	poll.Until(t, 30*time.Second, func() bool { return fresh.Load() == partitions },
		"the next member processed %d of %d new records", fresh.Load(), partitions)
	mu.Lock()
	defer mu.Unlock()
	if len(redelivered) > 0 {
		t.Errorf("%d records redelivered to the next member after a graceful stop: offsets %v", len(redelivered), redelivered)
	}
}

// deliveries counts, of the first perPartition records of each partition,
// those the gated worker did not process and its repeated processings.
func (g *gatedWorker) deliveries(perPartition int64) (missing, again int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p := range int64(partitions) {
		for o := range perPartition {
			switch n := g.delivered[[2]int64{p, o}]; {
			case n == 0:
				missing++
			case n > 1:
				again += n - 1
			}
		}
	}
	return missing, again
}

// checkLogged fails t if the gated worker's log holds any of bad.
func (g *gatedWorker) checkLogged(t *testing.T, bad ...string) {
	t.Helper()
	logged, err := os.ReadFile(g.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		if strings.Contains(string(logged), b) {
			t.Errorf("the stop logged %q:\n%s", b, logged)
		}
	}
}

// TestStopIsBoundedWhenTheBrokerIsGone stops a worker whose broker has
// gone away with outputs of its batch buffered: they can never be
// acknowledged nor its offsets committed, and the stop still returns within
// its bound: CommitTimeout to finish the batch plus CommitTimeout to commit
// and leave. The margin of 3 s covers the client's own close (at most 1 s
// each to end fetch sessions and to push its last metrics) and a loaded
// machine.
func TestStopIsBoundedWhenTheBrokerIsGone(t *testing.T) {
	const (
		perPartition  = 20
		commitTimeout = time.Second
		bound         = 2 * commitTimeout
		margin        = 3 * time.Second
	)
	b := brokertest.NewBroker(t, partitions)
	producer, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	adm := kadm.NewClient(producer)
	for _, topic := range []string{"gone.in", "gone.out"} {
		if _, err := adm.CreateTopic(t.Context(), partitions, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	for i := range perPartition {
		for p := range int32(partitions) {
			producer.Produce(t.Context(), &kgo.Record{Topic: "gone.in", Partition: p, Value: []byte{byte(i)}}, nil)
		}
	}
	if err := producer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	g := startGatedWorker(t, b.Addr(), "gone", "gone.in", "gone.out", commitTimeout)
	poll.Until(t, 30*time.Second, func() bool { return g.entered.Load() == partitions },
		"handlers entered %d of %d", g.entered.Load(), partitions)

	// The broker goes away, then the handlers return their outputs, which
	// nothing will acknowledge, and take the next records.
	b.Close()
	g.open()
	poll.Until(t, 30*time.Second, func() bool { return g.entered.Load() >= 2*partitions },
		"handlers entered %d, want %d", g.entered.Load(), 2*partitions)
	start := time.Now()
	g.cancel()
	g.waitStopped(t, bound+time.Minute)
	took := time.Since(start)
	t.Logf("stopped in %v with the broker gone (bound %v + margin %v)", took.Round(time.Millisecond), bound, margin)
	if took > bound+margin {
		t.Errorf("stopped in %v with the broker gone: more than its bound %v + margin %v", took, bound, margin)
	}
}
