// SPDX-License-Identifier: Apache-2.0

package relay

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// Partitions is the partition count of the relay's two topics.
	Partitions = 6
	// ValueSize is the size in bytes of the value of every relayed record.
	ValueSize = 300
	// Group is the worker's consumer group.
	Group = "relay-worker"
	// Timeout bounds setup, one relay run and the final flush each.
	Timeout = 2 * time.Minute
)

// Relay is a producer, a worker and a consumer around two topics of one
// broker, set up to relay exactly N records: the producer writes to topic
// A, the worker consumes A in Group and, for each record, produces one
// record to topic B from within its processing, and the consumer reads B
// and counts.
type Relay struct {
	// N is the number of records Run relays.
	N int
	// TopicA and TopicB are the two topics, named uniquely per Relay.
	TopicA, TopicB string

	// Observe, when set before Run, is called by the consumer for each
	// record of B once its processing has ended, with the time it ended.
	Observe func(rec *kgo.Record, received time.Time)

	producer *kgo.Client
	consumed atomic.Int64
	done     chan struct{} // closed when the consumer has counted N records
	errs     chan error

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var seq atomic.Int64

// New creates the topics on the broker at addr and starts the worker
// (joined to its group, owning every partition of A) and the consumer of B,
// each instrumented by inst. Nothing is produced until Run. The clients
// are closed by tb's cleanups.
func New(tb testing.TB, addr string, inst Instrumentation, n int) *Relay {
	tb.Helper()
	s := seq.Add(1)
	r := &Relay{
		N:      n,
		TopicA: fmt.Sprintf("relay.a.%d", s),
		TopicB: fmt.Sprintf("relay.b.%d", s),
		done:   make(chan struct{}),
		errs:   make(chan error, 3),
	}
	setupCtx, cancelSetup := context.WithTimeout(context.Background(), Timeout)
	defer cancelSetup()

	admin, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		tb.Fatalf("admin client: %v", err)
	}
	resp, err := kadm.NewClient(admin).CreateTopics(setupCtx, Partitions, 1, nil, r.TopicA, r.TopicB)
	if err == nil {
		err = resp.Error()
	}
	admin.Close()
	if err != nil {
		tb.Fatalf("create topics: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel

	assigned := make(chan struct{})
	var once sync.Once
	ws := inst(RoleWorker)
	worker := client(tb, addr, ws,
		kgo.ConsumerGroup(Group),
		kgo.ConsumeTopics(r.TopicA),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if len(m[r.TopicA]) == Partitions {
				once.Do(func() { close(assigned) })
			}
		}),
	)
	cs := inst(RoleConsumer)
	consumer := client(tb, addr, cs,
		kgo.ConsumeTopics(r.TopicB),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	r.producer = client(tb, addr, inst(RoleProducer))

	r.wg.Add(2)
	go r.work(ctx, worker, ws.Process)
	go r.consume(ctx, consumer, cs.Process)
	tb.Cleanup(r.Close)

	select {
	case <-assigned:
	case err := <-r.errs:
		tb.Fatalf("worker: %v", err)
	case <-setupCtx.Done():
		tb.Fatalf("worker not assigned all partitions of %s: %v", r.TopicA, setupCtx.Err())
	}
	return r
}

func client(tb testing.TB, addr string, s Stage, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	opts = append(opts, kgo.SeedBrokers(addr))
	if len(s.Hooks) > 0 {
		opts = append(opts, kgo.WithHooks(s.Hooks...))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		tb.Fatalf("client: %v", err)
	}
	tb.Cleanup(cl.Close)
	return cl
}

func (r *Relay) fail(err error) {
	select {
	case r.errs <- err:
	default:
	}
}

// work polls A and, for each record, produces one record to B from within
// its processing.
func (r *Relay) work(ctx context.Context, cl *kgo.Client, process ProcessFunc) {
	defer r.wg.Done()
	// Stopping waits for the records already produced to be acknowledged,
	// so that Close returns only after every send span has ended (the
	// consumer may read a record before its producer sees the ack).
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		_ = cl.Flush(fctx)
	}()
	onProduced := func(_ *kgo.Record, err error) {
		if err != nil && ctx.Err() == nil {
			r.fail(fmt.Errorf("produce to %s: %w", r.TopicB, err))
		}
	}
	r.poll(ctx, cl, func(rec *kgo.Record, hw int64) {
		process(ctx, rec, hw, func(pctx context.Context) {
			cl.Produce(pctx, &kgo.Record{Topic: r.TopicB, Key: rec.Key, Value: rec.Value, Context: pctx}, onProduced)
		})
	})
}

// poll polls cl until ctx ends, calling each for every record fetched
// with its partition's high watermark; fetch errors fail the relay.
func (r *Relay) poll(ctx context.Context, cl *kgo.Client, each func(rec *kgo.Record, highWatermark int64)) {
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(t string, p int32, err error) {
			r.fail(fmt.Errorf("fetch %s[%d]: %w", t, p, err))
		})
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			for _, rec := range p.Records {
				each(rec, p.HighWatermark)
			}
		})
	}
}

// consume polls B and counts records, closing done at N.
func (r *Relay) consume(ctx context.Context, cl *kgo.Client, process ProcessFunc) {
	defer r.wg.Done()
	nop := func(context.Context) {}
	r.poll(ctx, cl, func(rec *kgo.Record, hw int64) {
		process(ctx, rec, hw, nop)
		if r.Observe != nil {
			r.Observe(rec, time.Now())
		}
		if r.consumed.Add(1) == int64(r.N) {
			close(r.done)
		}
	})
}

// Run produces N records to A as fast as it can, all with the same value
// of ValueSize bytes, and waits until the consumer has counted N records
// from B.
func (r *Relay) Run(ctx context.Context) error {
	value := make([]byte, ValueSize)
	return r.RunWith(ctx, func(context.Context, int) ([]byte, error) { return value, nil })
}

// RunWith produces N records to A, the value of record i (0-based) from
// next(ctx, i), called just before its produce (next may wait, to pace the
// records), and waits until the consumer has counted N records from B.
func (r *Relay) RunWith(ctx context.Context, next func(ctx context.Context, i int) ([]byte, error)) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var prodErr atomic.Pointer[error]
	onProduced := func(_ *kgo.Record, err error) {
		if err != nil {
			prodErr.CompareAndSwap(nil, &err)
		}
	}
	for i := range r.N {
		value, err := next(ctx, i)
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		r.producer.Produce(ctx, &kgo.Record{Topic: r.TopicA, Key: strconv.AppendInt(nil, int64(i), 10), Value: value}, onProduced)
	}
	select {
	case <-r.done:
	case err := <-r.errs:
		return err
	case <-ctx.Done():
		return fmt.Errorf("relayed %d of %d records: %w", r.consumed.Load(), r.N, ctx.Err())
	}
	if err := r.producer.Flush(ctx); err != nil {
		return fmt.Errorf("flush producer: %w", err)
	}
	if p := prodErr.Load(); p != nil {
		return fmt.Errorf("produce to %s: %w", r.TopicA, *p)
	}
	if got := r.consumed.Load(); got != int64(r.N) {
		return fmt.Errorf("consumed %d records, want %d", got, r.N)
	}
	return nil
}

// Close stops the worker and the consumer; the clients are closed by their
// own cleanups. It is safe to call more than once.
func (r *Relay) Close() {
	r.cancel()
	r.wg.Wait()
}
