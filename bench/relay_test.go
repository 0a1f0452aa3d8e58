// SPDX-License-Identifier: Apache-2.0

package bench

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
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

const (
	relayPartitions = 6
	relayValueSize  = 300
	relayGroup      = "relay-worker"
	// relayTimeout bounds setup, one relay run and the final flush each.
	relayTimeout = 2 * time.Minute
)

// Roles of the relay's three clients.
const (
	roleProducer = "producer"
	roleWorker   = "worker"
	roleConsumer = "consumer"
)

// processFunc wraps the handling of one consumed record: it calls handle with
// the context the handler should use (and produce with).
type processFunc func(ctx context.Context, r *kgo.Record, highWatermark int64, handle func(context.Context))

// stage is how one client of the relay is instrumented.
type stage struct {
	hooks   []kgo.Hook
	process processFunc
}

// instrumentation returns the stage of each role.
type instrumentation func(role string) stage

func untraced(string) stage {
	return stage{process: func(ctx context.Context, _ *kgo.Record, _ int64, handle func(context.Context)) { handle(ctx) }}
}

func propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// kotelInstrumentation installs kotel's tracer and meter on every client and
// wraps handling in kotel's process span.
func kotelInstrumentation(tp trace.TracerProvider, mp metric.MeterProvider) instrumentation {
	return func(role string) stage {
		topts := []kotel.TracerOpt{kotel.TracerProvider(tp), kotel.TracerPropagator(propagator()), kotel.ClientID(role)}
		if role == roleWorker {
			topts = append(topts, kotel.ConsumerGroup(relayGroup))
		}
		tr := kotel.NewTracer(topts...)
		k := kotel.NewKotel(kotel.WithTracer(tr), kotel.WithMeter(kotel.NewMeter(kotel.MeterProvider(mp))))
		return stage{
			hooks: k.Hooks(),
			process: func(_ context.Context, r *kgo.Record, _ int64, handle func(context.Context)) {
				ctx, span := tr.WithProcessSpan(r)
				handle(ctx)
				span.End()
			},
		}
	}
}

// kretrieveInstrumentation installs kafkatrace's produce hooks on the
// producer and the worker and wraps handling in StartProcess/EndProcess; all
// three clients aggregate their messaging metrics in m, as the clients of one
// kretrieve process do. The tracer provider's sampler must be parent-based.
// With pathways, each client takes pathway checkpoints as the service
// "relay-"+role (kafkatrace.WithPathways), recorded in m. extra are more
// options of every client's Tracer.
func kretrieveInstrumentation(tp trace.TracerProvider, m *kafkatrace.Metrics, pathways bool, extra ...kafkatrace.Option) instrumentation {
	return func(role string) stage {
		opts := []kafkatrace.Option{
			kafkatrace.WithTracerProvider(tp), kafkatrace.WithMetrics(m), kafkatrace.WithParentBasedSampling(),
			kafkatrace.WithPropagator(propagator()), kafkatrace.WithClientID(role),
		}
		if role == roleWorker {
			opts = append(opts, kafkatrace.WithConsumerGroup(relayGroup))
		}
		if pathways {
			opts = append(opts, kafkatrace.WithPathways("relay-"+role))
		}
		tr := kafkatrace.New(append(opts, extra...)...)
		s := stage{process: func(ctx context.Context, r *kgo.Record, hw int64, handle func(context.Context)) {
			pctx, span, qw := tr.StartProcess(ctx, r, hw)
			handle(pctx)
			tr.EndProcess(pctx, r, qw.End, span, nil, "") // qw.End: when processing started
		}}
		if role != roleConsumer {
			s.hooks = []kgo.Hook{tr}
		}
		return s
	}
}

// relay is a producer, a worker and a consumer around two topics of one
// in-process broker, set up to relay exactly n records.
type relay struct {
	n        int
	topicA   string
	topicB   string
	producer *kgo.Client
	prodHook stage

	// observe, when set before run, is called by the consumer for each
	// record of B once its processing has ended, with the time it ended.
	observe func(rec *kgo.Record, received time.Time)

	consumed atomic.Int64
	done     chan struct{} // closed when the consumer has counted n records
	errs     chan error

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var relaySeq atomic.Int64

// newRelay starts a broker, creates the topics and starts the worker (joined
// to its group, owning every partition of A) and the consumer of B. Nothing
// is produced until run.
func newRelay(tb testing.TB, inst instrumentation, n int) *relay {
	tb.Helper()
	brk := brokertest.NewBroker(tb, relayPartitions)
	seq := relaySeq.Add(1)
	r := &relay{
		n:      n,
		topicA: fmt.Sprintf("relay.a.%d", seq),
		topicB: fmt.Sprintf("relay.b.%d", seq),
		done:   make(chan struct{}),
		errs:   make(chan error, 3),
	}
	setupCtx, cancelSetup := context.WithTimeout(context.Background(), relayTimeout)
	defer cancelSetup()

	admin, err := kgo.NewClient(kgo.SeedBrokers(brk.Addr()))
	if err != nil {
		tb.Fatalf("admin client: %v", err)
	}
	resp, err := kadm.NewClient(admin).CreateTopics(setupCtx, relayPartitions, 1, nil, r.topicA, r.topicB)
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
	ws := inst(roleWorker)
	worker := r.client(tb, brk.Addr(), ws,
		kgo.ConsumerGroup(relayGroup),
		kgo.ConsumeTopics(r.topicA),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if len(m[r.topicA]) == relayPartitions {
				once.Do(func() { close(assigned) })
			}
		}),
	)
	cs := inst(roleConsumer)
	consumer := r.client(tb, brk.Addr(), cs,
		kgo.ConsumeTopics(r.topicB),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	r.prodHook = inst(roleProducer)
	r.producer = r.client(tb, brk.Addr(), r.prodHook)

	r.wg.Add(2)
	go r.work(ctx, worker, ws.process)
	go r.consume(ctx, consumer, cs.process)
	tb.Cleanup(r.close)

	select {
	case <-assigned:
	case err := <-r.errs:
		tb.Fatalf("worker: %v", err)
	case <-setupCtx.Done():
		tb.Fatalf("worker not assigned all partitions of %s: %v", r.topicA, setupCtx.Err())
	}
	return r
}

func (r *relay) client(tb testing.TB, addr string, s stage, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	opts = append(opts, kgo.SeedBrokers(addr))
	if len(s.hooks) > 0 {
		opts = append(opts, kgo.WithHooks(s.hooks...))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		tb.Fatalf("client: %v", err)
	}
	tb.Cleanup(cl.Close)
	return cl
}

func (r *relay) fail(err error) {
	select {
	case r.errs <- err:
	default:
	}
}

// work polls A and, for each record, produces one record to B from within
// its processing.
func (r *relay) work(ctx context.Context, cl *kgo.Client, process processFunc) {
	defer r.wg.Done()
	// Stopping waits for the records already produced to be acknowledged,
	// so that close returns only after every send span has ended (the
	// consumer may read a record before its producer sees the ack).
	defer func() {
		fctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
		defer cancel()
		_ = cl.Flush(fctx)
	}()
	onProduced := func(_ *kgo.Record, err error) {
		if err != nil && ctx.Err() == nil {
			r.fail(fmt.Errorf("produce to %s: %w", r.topicB, err))
		}
	}
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
				process(ctx, rec, p.HighWatermark, func(pctx context.Context) {
					cl.Produce(pctx, &kgo.Record{Topic: r.topicB, Key: rec.Key, Value: rec.Value, Context: pctx}, onProduced)
				})
			}
		})
	}
}

// consume polls B and counts records, closing done at n.
func (r *relay) consume(ctx context.Context, cl *kgo.Client, process processFunc) {
	defer r.wg.Done()
	nop := func(context.Context) {}
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
				process(ctx, rec, p.HighWatermark, nop)
				if r.observe != nil {
					r.observe(rec, time.Now())
				}
				if r.consumed.Add(1) == int64(r.n) {
					close(r.done)
				}
			}
		})
	}
}

// run produces n records to A as fast as it can, all with the same value,
// and waits until the consumer has counted n records from B.
func (r *relay) run(ctx context.Context) error {
	value := make([]byte, relayValueSize)
	return r.runWith(ctx, func(context.Context, int) ([]byte, error) { return value, nil })
}

// runWith produces n records to A, the value of record i (0-based) from
// next(ctx, i), called just before its produce (next may wait, to pace the
// records), and waits until the consumer has counted n records from B.
func (r *relay) runWith(ctx context.Context, next func(ctx context.Context, i int) ([]byte, error)) error {
	ctx, cancel := context.WithTimeout(ctx, relayTimeout)
	defer cancel()
	var prodErr atomic.Pointer[error]
	onProduced := func(_ *kgo.Record, err error) {
		if err != nil {
			prodErr.CompareAndSwap(nil, &err)
		}
	}
	for i := range r.n {
		value, err := next(ctx, i)
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		r.producer.Produce(ctx, &kgo.Record{Topic: r.topicA, Key: strconv.AppendInt(nil, int64(i), 10), Value: value}, onProduced)
	}
	select {
	case <-r.done:
	case err := <-r.errs:
		return err
	case <-ctx.Done():
		return fmt.Errorf("relayed %d of %d records: %w", r.consumed.Load(), r.n, ctx.Err())
	}
	if err := r.producer.Flush(ctx); err != nil {
		return fmt.Errorf("flush producer: %w", err)
	}
	if p := prodErr.Load(); p != nil {
		return fmt.Errorf("produce to %s: %w", r.topicA, *p)
	}
	if got := r.consumed.Load(); got != int64(r.n) {
		return fmt.Errorf("consumed %d records, want %d", got, r.n)
	}
	return nil
}

// close stops the worker and the consumer; the clients and the broker are
// closed by their own cleanups.
func (r *relay) close() {
	r.cancel()
	r.wg.Wait()
}
