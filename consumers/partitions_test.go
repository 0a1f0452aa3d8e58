// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

const partitions = 6

// partitionEnv is a broker with a six-partition input topic, a
// six-partition output topic and a producer that places records on the
// partition they name.
type partitionEnv struct {
	t        *testing.T
	addr     string
	in, out  string
	producer *kgo.Client
	adm      *kadm.Client
	broker   *broker.Broker
	logs     io.Writer // the workers' logs; io.Discard when nil
}

func newPartitionEnv(t *testing.T, in string, outConfig map[string]*string) *partitionEnv {
	t.Helper()
	b := brokertest.NewBroker(t, partitions)
	addr := b.Addr()
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	e := &partitionEnv{t: t, addr: addr, in: in, out: in + ".out", producer: producer, adm: kadm.NewClient(producer), broker: b}
	if _, err := e.adm.CreateTopic(t.Context(), partitions, -1, nil, e.in); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.CreateTopic(t.Context(), partitions, -1, outConfig, e.out); err != nil {
		t.Fatal(err)
	}
	return e
}

// produce writes n records to each partition of the given ones.
func (e *partitionEnv) produce(n int, parts ...int32) {
	e.t.Helper()
	var (
		wg   sync.WaitGroup
		once sync.Once
		perr error
	)
	for i := range n {
		for _, p := range parts {
			wg.Add(1)
			e.producer.Produce(e.t.Context(), &kgo.Record{Topic: e.in, Partition: p, Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) {
				if err != nil {
					once.Do(func() { perr = err })
				}
				wg.Done()
			})
		}
	}
	wg.Wait()
	if perr != nil {
		e.t.Fatalf("produce: %v", perr)
	}
}

// run starts a worker of group on the input topic, stopped by t.Cleanup.
// Its outputs keep the partition of their input.
func (e *partitionEnv) run(group string, h consumers.Handler) *consumers.Worker {
	e.t.Helper()
	w, _ := e.runStoppable(group, h)
	return w
}

// waitCommitted waits until the group has committed want on every partition.
func (e *partitionEnv) waitCommitted(group string, want int64) {
	e.t.Helper()
	var last strings.Builder
	if !poll.Wait(30*time.Second, func() bool {
		resp, err := e.adm.FetchOffsets(e.t.Context(), group)
		if err != nil {
			return false
		}
		all := true
		last.Reset()
		for p := range int32(partitions) {
			o, ok := resp.Lookup(e.in, p)
			all = all && ok && o.At == want
			fmt.Fprintf(&last, " p%d=%d", p, o.At)
		}
		return all
	}) {
		e.t.Fatalf("committed offsets did not all reach %d:%s", want, last.String())
	}
}

// deliveries records, per partition, the offsets a handler was given.
type deliveries struct {
	mu      sync.Mutex
	offsets [partitions][]int64
	total   int
}

func (d *deliveries) add(r *kgo.Record) (counts [partitions]int, total int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.offsets[r.Partition] = append(d.offsets[r.Partition], r.Offset)
	d.total++
	for p := range counts {
		counts[p] = len(d.offsets[p])
	}
	return counts, d.total
}

func (d *deliveries) of(p int32) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int64(nil), d.offsets[p]...)
}

// TestBacklogDrainsAllPartitionsTogether starts one worker on a backlog
// spread evenly over six partitions: every partition makes progress from
// the start (all of them within the first 15% of the records, none done
// before all have started), each in offset order, and every partition's
// offset is committed at the end.
func TestBacklogDrainsAllPartitionsTogether(t *testing.T) {
	const perPartition = 2000
	e := newPartitionEnv(t, "backlog.in", nil)
	e.produce(perPartition, 0, 1, 2, 3, 4, 5)

	var (
		d           deliveries
		snapMu      sync.Mutex
		early       *[partitions]int // counts when 15% of all records were taken
		atFirstDone *[partitions]int // counts when a partition took its last record
	)
	w := e.run("backlog", func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		counts, total := d.add(msg.Record)
		snapMu.Lock()
		if early == nil && total == partitions*perPartition*15/100 {
			early = &counts
		}
		if atFirstDone == nil && counts[msg.Record.Partition] == perPartition {
			atFirstDone = &counts
		}
		snapMu.Unlock()
		time.Sleep(100 * time.Microsecond)
		return nil, nil
	})
	e.waitCommitted("backlog", perPartition)

	snapMu.Lock()
	defer snapMu.Unlock()
	if early == nil || atFirstDone == nil {
		t.Fatalf("processed %d records, want %d", w.Processed(), partitions*perPartition)
	}
	for p := range partitions {
		if early[p] == 0 {
			t.Errorf("partition %d had not started after 15%% of the backlog: %v", p, *early)
		}
		if atFirstDone[p] == 0 {
			t.Errorf("partition %d had not started when another was done: %v", p, *atFirstDone)
		}
	}
	t.Logf("records per partition at 15%%: %v; when the first partition was done: %v", *early, *atFirstDone)
	for p := range int32(partitions) {
		offsets := d.of(p)
		if len(offsets) != perPartition {
			t.Errorf("partition %d: %d deliveries, want %d", p, len(offsets), perPartition)
		}
		for i, o := range offsets {
			if o != int64(i) {
				t.Fatalf("partition %d: delivery %d is offset %d: not in order", p, i, o)
			}
		}
	}
}

// TestSlowPartitionDoesNotHoldOthers blocks the handler on partition 0's
// first record: the other partitions' records are all processed meanwhile,
// and partition 0 continues, in order, once released.
func TestSlowPartitionDoesNotHoldOthers(t *testing.T) {
	const perPartition = 100
	e := newPartitionEnv(t, "slow.in", nil)
	release := make(chan struct{})
	var d deliveries
	e.run("slow", func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		d.add(msg.Record)
		if msg.Record.Partition == 0 && msg.Record.Offset == 0 {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return []*kgo.Record{{Topic: e.out, Partition: msg.Record.Partition, Value: msg.Record.Value}}, nil
	})
	e.produce(perPartition, 0, 1, 2, 3, 4, 5)

	poll.Until(t, 20*time.Second, func() bool {
		for p := int32(1); p < partitions; p++ {
			if len(d.of(p)) != perPartition {
				return false
			}
		}
		return true
	}, "the other partitions did not finish while partition 0 was blocked")
	if got := d.of(0); len(got) != 1 {
		t.Fatalf("partition 0 went on past its blocked record: %v", got)
	}
	close(release)
	e.waitCommitted("slow", perPartition)
	for p := range int32(partitions) {
		for i, o := range d.of(p) {
			if o != int64(i) {
				t.Fatalf("partition %d: delivery %d is offset %d: not in order", p, i, o)
			}
		}
	}
}

// TestFailedOutputRewindsOnlyItsPartition has the broker refuse one output
// of partition 2 (too large for the output topic) on its first delivery:
// partition 2 is fetched again from the failed record or before, in order,
// while the other partitions are delivered exactly once; all offsets are
// committed in the end.
func TestFailedOutputRewindsOnlyItsPartition(t *testing.T) {
	const perPartition, failAt = 50, 20
	maxBytes := "2048"
	e := newPartitionEnv(t, "rewind.in", map[string]*string{"max.message.bytes": &maxBytes})
	var (
		d      deliveries
		failMu sync.Mutex
		failed bool
	)
	e.run("rewind", func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		d.add(msg.Record)
		value := msg.Record.Value
		if msg.Record.Partition == 2 && msg.Record.Offset == failAt {
			failMu.Lock()
			if !failed {
				failed = true
				value = make([]byte, 8<<10) // incompressible, over the output topic's limit
				_, _ = rand.Read(value)
			}
			failMu.Unlock()
		}
		return []*kgo.Record{{Topic: e.out, Partition: msg.Record.Partition, Value: value}}, nil
	})
	e.produce(perPartition, 0, 1, 2, 3, 4, 5)
	e.waitCommitted("rewind", perPartition)

	for p := range int32(partitions) {
		offsets := d.of(p)
		if p != 2 {
			if len(offsets) != perPartition {
				t.Errorf("partition %d: %d deliveries, want %d exactly once", p, len(offsets), perPartition)
			}
			continue
		}
		// Increasing, except one step back to the failed record or before.
		back := -1
		for i := 1; i < len(offsets); i++ {
			if offsets[i] <= offsets[i-1] {
				if back >= 0 {
					t.Fatalf("partition 2 went back twice: %v", offsets)
				}
				back = i
			} else if offsets[i] != offsets[i-1]+1 {
				t.Fatalf("partition 2 skipped from %d to %d: %v", offsets[i-1], offsets[i], offsets)
			}
		}
		if back < 0 || offsets[back] > failAt || offsets[back-1] < failAt {
			t.Fatalf("partition 2 was not rewound to offset %d or before: %v", failAt, offsets)
		}
		if offsets[len(offsets)-1] != perPartition-1 {
			t.Fatalf("partition 2 did not finish: %v", offsets)
		}
	}
}

// TestRefusedOutputsRewindWithBackoff has the broker refuse every output
// (the output topic's max.message.bytes below any record, as a broker with
// a full disk refuses them) for a while: each partition is rewound and
// re-run no more often than its backoff allows, doubling, and the failures
// are logged once per rewind, not once per output; once the broker takes
// outputs again, every record is processed and committed.
func TestRefusedOutputsRewindWithBackoff(t *testing.T) {
	const perPartition, refusal = 10, 2 * time.Second
	tiny := "16"
	e := newPartitionEnv(t, "refused.in", map[string]*string{"max.message.bytes": &tiny})
	var logs syncbuf.Buffer
	e.logs = &logs
	var d deliveries
	e.produce(perPartition, 0, 1, 2, 3, 4, 5)
	e.run("refused", func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		d.add(msg.Record)
		return []*kgo.Record{{Topic: e.out, Partition: msg.Record.Partition, Value: msg.Record.Value}}, nil
	})
	pause := time.NewTimer(refusal) // the refusal under test
	<-pause.C
	lines := strings.Split(logs.String(), "\n")
	var rewinds, errorLines int
	for _, l := range lines {
		if strings.Contains(l, "rewinding partition") {
			rewinds++
		}
		if strings.Contains(l, "level=ERROR") {
			errorLines++
		}
	}
	d.mu.Lock()
	delivered := d.total
	d.mu.Unlock()
	t.Logf("in %v of refusal: %d deliveries, %d rewinds, %d error lines", refusal, delivered, rewinds, errorLines)
	// The worker's RetryBackoff is 1 ms here: 1, 2, 4, … 1024 ms between a
	// partition's rewinds fit 11 or 12 rewinds in 2 s (±20% jitter).
	if bound := partitions * 13; rewinds > bound || errorLines > bound {
		t.Errorf("%d rewinds and %d error lines in %v: more than %d (%d partitions, each rewound at most 13 times)", rewinds, errorLines, refusal, bound, partitions)
	}
	if bound := partitions * 13 * perPartition; delivered > bound {
		t.Errorf("%d deliveries in %v: more than %d", delivered, refusal, bound)
	}
	resp, err := e.adm.AlterTopicConfigs(t.Context(), []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "max.message.bytes"}}, e.out)
	for _, r := range resp {
		err = errors.Join(err, r.Err)
	}
	if err != nil {
		t.Fatal(err)
	}
	e.waitCommitted("refused", perPartition)
	if n := e.count(e.out); n < partitions*perPartition {
		t.Errorf("%d outputs after the refusal, want %d", n, partitions*perPartition)
	}
}

// TestHandoverRedeliversNothing moves partitions between workers of one
// group mid-backlog, by a second worker joining and then the first one
// shutting down: a revoked partition finishes its record in flight, waits
// for the outputs and commits before it is given away, and shutdown does
// the same, so every record is processed exactly once and its output
// acknowledged.
func TestHandoverRedeliversNothing(t *testing.T) {
	const perPartition = 2000
	e := newPartitionEnv(t, "handover.in", nil)
	e.produce(perPartition, 0, 1, 2, 3, 4, 5)

	var d deliveries
	handler := func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		d.add(msg.Record)
		time.Sleep(500 * time.Microsecond)
		return []*kgo.Record{{Topic: e.out, Partition: msg.Record.Partition, Value: msg.Record.Value}}, nil
	}
	total := func() int {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.total
	}
	waitTotal := func(n int) {
		t.Helper()
		if !poll.Wait(20*time.Second, func() bool { return total() >= n }) {
			t.Fatalf("%d records processed, want %d", total(), n)
		}
	}

	first, stopFirst := e.runStoppable("handover", handler)
	waitTotal(partitions * perPartition / 5)
	second := e.run("handover", handler)
	// The first worker has revoked partitions once the second processes.
	poll.Until(t, 20*time.Second, func() bool {
		if total() == partitions*perPartition && second.Processed() == 0 {
			t.Fatal("the second worker got no partitions before the backlog was done")
		}
		return second.Processed() > 0
	}, "the second worker got no partitions")
	stopFirst()
	if total() == partitions*perPartition {
		t.Fatal("the backlog was done before the first worker stopped")
	}
	e.waitCommitted("handover", perPartition)
	t.Logf("processed by the first worker: %d, by the second: %d", first.Processed(), second.Processed())

	for p := range int32(partitions) {
		seen := make(map[int64]int)
		for _, o := range d.of(p) {
			seen[o]++
		}
		for o := range int64(perPartition) {
			if seen[o] != 1 {
				t.Errorf("partition %d offset %d processed %d times", p, o, seen[o])
			}
		}
	}
	if got := e.count(e.out); got != partitions*perPartition {
		t.Errorf("%d outputs, want %d", got, partitions*perPartition)
	}
}

// runStoppable is run with a function that stops the worker and waits for
// Run to return.
func (e *partitionEnv) runStoppable(group string, h consumers.Handler) (*consumers.Worker, func()) {
	e.t.Helper()
	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(noop.NewTracerProvider()), kafkatrace.WithConsumerGroup(group))
	w, err := consumers.New(consumers.Config{Group: group, Topic: e.in, RetryBackoff: time.Millisecond}, tracer, h,
		// A short heartbeat interval lets a joining worker be assigned
		// partitions within the test's backlog.
		[]kgo.Opt{kgo.SeedBrokers(e.addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.HeartbeatInterval(100 * time.Millisecond)},
		consumers.WithLogger(slog.New(slog.NewTextHandler(cmp.Or[io.Writer](e.logs, io.Discard), nil))))
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("worker: %v", err)
			}
		})
	}
	e.t.Cleanup(stop)
	return w, stop
}

// count returns how many records topic holds.
func (e *partitionEnv) count(topic string) int {
	e.t.Helper()
	ends, err := e.adm.ListEndOffsets(e.t.Context(), topic)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	ends.Each(func(o kadm.ListedOffset) { n += int(o.Offset) })
	return n
}

// TestResumedPartitionIsNotStalled gives one partition a backlog while the
// others are idle: each time its queue fills, its fetching is paused and
// later resumed, and a fetch of the idle partitions (which the broker holds
// while they have no records) must not hold it for long.
func TestResumedPartitionIsNotStalled(t *testing.T) {
	const backlog = 3000
	e := newPartitionEnv(t, "resume.in", nil)
	e.produce(backlog, 0)
	var (
		mu      sync.Mutex
		last    time.Time
		longest time.Duration
	)
	w := e.run("resume", func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		mu.Lock()
		if now := time.Now(); !last.IsZero() {
			longest = max(longest, now.Sub(last))
			last = now
		} else {
			last = now
		}
		mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		return nil, nil
	})
	poll.Wait(30*time.Second, func() bool { return w.Processed() >= backlog }) // checked below
	mu.Lock()
	defer mu.Unlock()
	if w.Processed() < backlog {
		t.Fatalf("processed %d of %d records", w.Processed(), backlog)
	}
	// With franz-go's default fetch wait, a resumed partition waited up
	// to 5 s behind the idle partitions' fetch.
	if longest > time.Second {
		t.Errorf("the partition waited %v between two records", longest)
	}
	t.Logf("longest wait between two records: %v", longest)
}
