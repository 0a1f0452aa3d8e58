// SPDX-License-Identifier: Apache-2.0

package results

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/topology"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// Outcome is what became of a request: a result, or a dead letter.
type Outcome struct {
	RequestID string
	// Result is set when the request completed.
	Result messages.Result
	// Failed is true when the request (or its candidates) was dead-lettered.
	Failed bool
	// Reason and Topic say why and where a failed request was dead-lettered.
	Reason string
	Topic  string
	// TraceID is the hex trace id found on the outcome record.
	TraceID string

	// corr is the record's messages.HeaderCorrelation value, "" without one.
	corr string
}

// ErrRequestIDInUse is returned by Collector.Claim (and so by
// producer.Client.Start) for a request id that is still waited for, or
// whose outcome was delivered less than 10 minutes ago: the id would not
// identify one call.
var ErrRequestIDInUse = errors.New("request id already in flight or recently delivered")

// waiter is a registered interest in a request id: the correlation value its
// outcome must carry ("" for none), or any value (Expect), and the channel
// it is delivered to.
type waiter struct {
	corr string
	any  bool
	ch   chan Outcome
	fn   func(Outcome) // instead of ch (ClaimFunc)
}

// matches reports whether an outcome carrying corr is for w.
func (w waiter) matches(corr string) bool { return w.any || w.corr == corr }

// seen is a request id whose outcome was delivered, or whose waiter gave up:
// the correlation value it was waited with (or any), and when.
type seen struct {
	corr string
	any  bool
	at   time.Time
}

// matches reports whether an outcome carrying corr is for s.
func (s seen) matches(corr string) bool { return s.any || s.corr == corr }

// dedupWindow is how long a delivered request id is remembered to recognise
// duplicate results.
const dedupWindow = 10 * time.Minute

// Collector reads results and dead letters and delivers each request's first
// outcome to the call waiting for it. Later outcomes for the same request
// (redeliveries under at-least-once) are counted as duplicates.
//
// An outcome is matched by its request id and its messages.HeaderCorrelation
// value: a Client's call waits for the random value its request was
// published with, so an outcome of another call with the same request id
// (another caller's, or another gateway instance's) is not handed to it and
// is counted as foreign.
//
// A producer.Client runs its Collector and claims the outcome of each of
// its requests; Expect is for requests published by others.
type Collector struct {
	client  *kgo.Client
	topics  []string      // the results topic and the dead-letter topics
	every   time.Duration // how often its topics' partitions are checked
	parts   *partitions
	process consumers.Handler // handle inside consumers.Trace
	logger  *slog.Logger

	mu        sync.Mutex
	waiting   map[string]waiter
	delivered map[string]seen // ids whose outcome was delivered
	abandoned map[string]seen // ids whose waiter gave up (Forget)
	inserts   int

	duplicates atomic.Int64
	late       atomic.Int64
	unexpected atomic.Int64
	undecoded  atomic.Int64
}

// NewCollector starts consuming the results topic of t and the dead-letter
// topics of every stage's input from their current ends, so every outcome of a
// request published after NewCollector returns is seen. Partitions added to
// these topics later are consumed from their start: Run checks the topics
// every metadata interval of the client (kgo.MetadataMaxAge, which
// kafkaclient.Options sets; franz-go's default is 5 minutes), so an outcome
// on a new partition waits at most about that long. clientOpts are the
// connection options (see kafkaclient.Options); tracer creates the wait and
// process spans and should have no consumer group. Its option is
// WithLogger. Call Run to process.
func NewCollector(ctx context.Context, clientOpts []kgo.Opt, tracer *kafkatrace.Tracer, t topology.Topology, opts ...Option) (*Collector, error) {
	cfg := newOptions(opts)
	names := []string{t.Results()}
	for _, in := range t.Inputs() {
		names = append(names, messages.DLQTopic(in))
	}
	admin, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("collector: %w", err)
	}
	every := admin.OptValue(kgo.MetadataMaxAge).(time.Duration)
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, names...)
	admin.Close()
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("collector: list end offsets: %w", err)
	}
	start := make(map[string]map[int32]kgo.Offset)
	at := make(map[topicPartition]int64)
	ends.Each(func(o kadm.ListedOffset) {
		if start[o.Topic] == nil {
			start[o.Topic] = make(map[int32]kgo.Offset)
		}
		start[o.Topic][o.Partition] = kgo.NewOffset().At(o.Offset)
		at[topicPartition{o.Topic, o.Partition}] = o.Offset
	})
	kopts := append(append([]kgo.Opt{}, clientOpts...), kgo.ConsumePartitions(start),
		// A partition added to the consumed ones is fetched from the next
		// fetch request on, once the one in flight returns: idle, after
		// this long-poll wait (franz-go's default, 5 s). A quarter of the
		// check interval, at most a second, keeps a new partition read
		// within one interval of the check that found it; idle, it costs
		// an empty fetch a second per broker at most.
		kgo.FetchMaxWait(min(every/4, time.Second)))
	client, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("collector: %w", err)
	}
	c := &Collector{
		client:    client,
		topics:    names,
		every:     every,
		parts:     newPartitions(at),
		logger:    cfg.logger,
		waiting:   make(map[string]waiter),
		delivered: make(map[string]seen),
		abandoned: make(map[string]seen),
	}
	c.process = consumers.Chain(c.handle, consumers.Trace(tracer, func(_ *consumers.Message, err error) string { return messages.Reason(err) }))
	return c, nil
}

// Expect registers interest in requestID's outcome, whatever its
// messages.HeaderCorrelation value: for requests that the caller knows are
// its own, published by another producer or another Client. Call it before
// publishing the request. The channel receives exactly one Outcome.
// (producer.Client.Start waits for its own requests by their correlation
// value, with Claim, so that a request id shared by two calls cannot mix
// up their outcomes; the gateway uses only that.)
func (c *Collector) Expect(requestID string) <-chan Outcome {
	ch := make(chan Outcome, 1)
	c.mu.Lock()
	c.waiting[requestID] = waiter{any: true, ch: ch}
	c.mu.Unlock()
	return ch
}

// Claim registers interest in the outcome of requestID carrying the
// correlation value corr, unless requestID is waited for already or its
// outcome was delivered within dedupWindow (ErrRequestIDInUse). The
// channel receives exactly one Outcome; ForgetClaim withdraws the claim.
func (c *Collector) Claim(requestID, corr string) (<-chan Outcome, error) {
	ch := make(chan Outcome, 1)
	if err := c.claim(requestID, waiter{corr: corr, ch: ch}); err != nil {
		return nil, err
	}
	return ch, nil
}

// ClaimFunc is Claim for a caller that does not wait on a channel: the
// outcome is handed to fn, once, on the goroutine that runs Run, after the
// collector's lock is released (fn may call the Collector). fn must return
// quickly: outcomes behind it wait.
func (c *Collector) ClaimFunc(requestID, corr string, fn func(Outcome)) error {
	return c.claim(requestID, waiter{corr: corr, fn: fn})
}

func (c *Collector) claim(requestID string, w waiter) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.inUse(requestID); err != nil {
		return err
	}
	c.waiting[requestID] = w
	delete(c.abandoned, requestID)
	return nil
}

// inUse returns ErrRequestIDInUse when requestID is waited for or was
// delivered within dedupWindow. c.mu is held.
func (c *Collector) inUse(requestID string) error {
	if _, ok := c.waiting[requestID]; ok {
		return ErrRequestIDInUse
	}
	if d, ok := c.delivered[requestID]; ok && time.Since(d.at) <= dedupWindow {
		return ErrRequestIDInUse
	}
	return nil
}

// CheckUnused returns ErrRequestIDInUse when requestID is waited for, or
// its outcome was delivered within the last 10 minutes; nil otherwise.
func (c *Collector) CheckUnused(requestID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inUse(requestID)
}

// Forget withdraws interest in requestID (after a timeout); an outcome that
// arrives later is dropped and counted as late.
func (c *Collector) Forget(requestID string) {
	c.mu.Lock()
	if w, ok := c.waiting[requestID]; ok {
		c.forgetLocked(requestID, w.corr)
	}
	c.mu.Unlock()
}

// ForgetClaim is Forget of the Claim of requestID with corr only: an
// outcome of requestID that arrives later is dropped and counted as late.
func (c *Collector) ForgetClaim(requestID, corr string) {
	c.mu.Lock()
	c.forgetLocked(requestID, corr)
	c.mu.Unlock()
}

func (c *Collector) forgetLocked(requestID, corr string) {
	if w, ok := c.waiting[requestID]; ok && w.corr == corr {
		delete(c.waiting, requestID)
		c.abandoned[requestID] = seen{corr: corr, any: w.any, at: time.Now()}
	}
}

// Duplicates counts outcomes for requests whose outcome was already delivered.
func (c *Collector) Duplicates() int64 { return c.duplicates.Load() }

// Late counts outcomes that arrived after their waiter gave up.
func (c *Collector) Late() int64 { return c.late.Load() }

// Unexpected counts outcomes nobody here was waiting for: requests of other
// producers or other gateway instances, and outcomes whose correlation value
// is not the one their request id is waited for with.
func (c *Collector) Unexpected() int64 { return c.unexpected.Load() }

// RegisterMetrics exports the collector's counters on mp as
// kretrieve.results.dropped{reason=duplicate|late|foreign|undecodable}.
func (c *Collector) RegisterMetrics(mp metric.MeterProvider) (metric.Registration, error) {
	meter := mp.Meter(ScopeName)
	dropped, err := meter.Int64ObservableCounter(otelnames.MetricResultsDropped,
		metric.WithUnit(otelnames.MetricResultsDroppedUnit),
		metric.WithDescription("Outcome records not handed to a waiter, by reason."))
	if err != nil {
		return nil, err
	}
	reasons := []struct {
		set metric.ObserveOption
		n   *atomic.Int64
	}{
		{metric.WithAttributes(otelnames.DroppedReason.String("duplicate")), &c.duplicates},
		{metric.WithAttributes(otelnames.DroppedReason.String("late")), &c.late},
		{metric.WithAttributes(otelnames.DroppedReason.String("foreign")), &c.unexpected},
		{metric.WithAttributes(otelnames.DroppedReason.String("undecodable")), &c.undecoded},
	}
	return meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, r := range reasons {
			o.ObserveInt64(dropped, r.n.Load(), r.set)
		}
		return nil
	}, dropped)
}

// Run processes outcome records, and checks the topics' partitions every
// metadata interval (see Ready), until ctx is done, then closes the client.
func (c *Collector) Run(ctx context.Context) error {
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watching sync.WaitGroup
	watching.Go(func() { c.watch(watchCtx) })
	defer func() {
		stopWatch()
		watching.Wait()
		c.client.Close()
	}()
	for {
		fetches := c.client.PollFetches(ctx)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) {
				c.logger.WarnContext(ctx, "fetch error", "topic", topic, "partition", partition, "err", err)
			}
		})
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			for _, rec := range p.Records {
				_, _ = c.process(ctx, &consumers.Message{Record: rec, HighWatermark: p.HighWatermark, Attempt: 1})
			}
			if n := len(p.Records); n > 0 {
				c.parts.advance(p.Topic, p.Partition, p.Records[n-1].Offset+1)
			}
		})
	}
}

// handle decodes an outcome record and delivers it, inside its process
// span (ctx); an undecodable record fails its span with the
// messages.Reason of the error.
func (c *Collector) handle(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
	rec := msg.Record
	out, err := c.decode(rec)
	if err != nil {
		c.undecoded.Add(1)
		c.logger.WarnContext(ctx, "undecodable outcome record", "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", err)
		return nil, err
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		out.TraceID = sc.TraceID().String()
	}
	c.deliver(out)
	return nil, nil
}

func (c *Collector) decode(rec *kgo.Record) (Outcome, error) {
	headers := tracecontext.HeaderCarrier{Record: rec}
	corr := strings.Clone(headers.Get(messages.HeaderCorrelation))
	if strings.HasSuffix(rec.Topic, messages.DLQSuffix) {
		reason := headers.Get(deadletters.HeaderReason)
		return Outcome{RequestID: string(rec.Key), Failed: true, Reason: reason, Topic: rec.Topic, corr: corr}, nil
	}
	res, err := messages.DecodeResult(rec.Value)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{RequestID: res.RequestID, Result: res, Topic: rec.Topic, corr: corr}, nil
}

func (c *Collector) deliver(out Outcome) {
	if fn := c.deliverLocked(out); fn != nil {
		fn(out)
	}
}

// deliverLocked delivers out under c.mu, and returns the function to hand
// it to when its waiter claimed it with ClaimFunc.
func (c *Collector) deliverLocked(out Outcome) func(Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, done := c.delivered[out.RequestID]; done && d.matches(out.corr) {
		c.duplicates.Add(1)
		return nil
	}
	w, ok := c.waiting[out.RequestID]
	if !ok || !w.matches(out.corr) {
		if a, gaveUp := c.abandoned[out.RequestID]; gaveUp && a.matches(out.corr) {
			delete(c.abandoned, out.RequestID)
			c.late.Add(1)
		} else {
			c.unexpected.Add(1)
		}
		return nil
	}
	delete(c.waiting, out.RequestID)
	if w.fn == nil {
		w.ch <- out
	}
	now := time.Now()
	c.delivered[out.RequestID] = seen{corr: out.corr, any: w.any, at: now}
	if c.inserts++; c.inserts%1024 == 0 {
		for _, m := range []map[string]seen{c.delivered, c.abandoned} {
			for id, s := range m {
				if now.Sub(s.at) > dedupWindow {
					delete(m, id)
				}
			}
		}
	}
	return w.fn
}
