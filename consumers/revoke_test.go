// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// TestRevokeDoesNotWaitPastTheRebalanceBudget holds every produce at the
// broker once the inputs are written, so the outputs of the first worker's records
// are never acknowledged, and starts a second worker in the group. The
// first worker's revoke gives up waiting for those outputs within its
// budget, says so, and rejoins in time: it is never dropped from the group
// (which would stall every partition for another rebalance), its revoked
// partitions' records go to the second worker again, and once produces
// flow again every input is committed with its output written.
func TestRevokeDoesNotWaitPastTheRebalanceBudget(t *testing.T) {
	e := newPartitionEnv(t, "revoke.in", nil)
	cluster := e.broker.Cluster()
	release := make(chan struct{})
	var holding atomic.Bool
	var held atomic.Int64
	// Produce requests name topics by id from version 13 on: hold them all
	// (only the workers produce once the inputs are written).
	cluster.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		if holding.Load() {
			held.Add(1)
			cluster.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	releaseOnce := func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}
	t.Cleanup(releaseOnce) // before the broker closes: its control sleeps end

	var processed atomic.Int64
	handler := func(_ context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		processed.Add(1)
		return []*kgo.Record{{Topic: e.out, Partition: msg.Record.Partition, Value: msg.Record.Value}}, nil
	}
	var logs syncbuf.Buffer
	start := func(name string) *consumers.Worker {
		cfg := consumers.Config{Group: "revoke", Topic: e.in, InstanceID: name,
			RebalanceTimeout: 3 * time.Second, HeartbeatInterval: time.Second, SessionTimeout: 10 * time.Second}
		tracer := kafkatrace.New(kafkatrace.WithTracerProvider(noop.NewTracerProvider()), kafkatrace.WithConsumerGroup("revoke"))
		w, err := consumers.New(cfg, tracer, handler,
			[]kgo.Opt{kgo.SeedBrokers(e.addr), kgo.RecordPartitioner(kgo.ManualPartitioner())},
			consumers.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)).With("worker", name)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		t.Cleanup(func() {
			releaseOnce()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
		return w
	}

	e.produce(1, 0, 1, 2, 3, 4, 5)
	holding.Store(true)
	first := start("first")
	poll.Until(t, 20*time.Second, func() bool { return first.Processed() == partitions && held.Load() > 0 },
		"the first worker processing a record per partition, its outputs held")

	second := start("second")
	poll.Until(t, 30*time.Second, func() bool { return second.Processed() > 0 },
		"the second worker processing the revoked partitions' records")
	if !strings.Contains(logs.String(), `msg="revoke: outputs not acknowledged within the rebalance budget; their inputs go to the next owner again" worker=first`) {
		t.Errorf("the first worker did not say its revoke gave up waiting for outputs; logs:\n%s", logs.String())
	}

	for _, line := range []string{`msg="partitions revoked" worker=first group=revoke topic=` + e.in + ` partitions="[`,
		`msg="partitions assigned" worker=second group=revoke topic=` + e.in + ` partitions="[`} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("no line %q: a rebalance's moves are not logged; logs:\n%s", line, logs.String())
		}
	}

	releaseOnce()
	e.waitCommitted("revoke", 1)
	if got := e.count(e.out); got < partitions {
		t.Errorf("%d outputs, want at least %d", got, partitions)
	}
	if strings.Contains(logs.String(), "partitions lost") {
		t.Errorf("a worker was dropped from the group (partitions lost); logs:\n%s", logs.String())
	}
	t.Logf("records processed: %d (%d inputs; the revoked partitions' records twice)", processed.Load(), partitions)
}
