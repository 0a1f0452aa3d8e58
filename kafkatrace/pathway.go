// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/pathway"
)

// WithPathways puts a pathway context (package pathway) on every record
// the Tracer produces and measures every record it produces or starts
// processing at a pathway checkpoint, whatever the trace sampling: the
// checkpoints are identified by service (the process's service.name), the
// consumer group (WithConsumerGroup), the topic and the direction. The
// latencies go into the Metrics given with WithMetrics. Default: off (no
// pathway header is written, and one found on a record is left alone).
func WithPathways(service string) Option {
	return optionFunc(func(c *config) {
		c.pathways = true
		c.service = service
	})
}

// pathwayKey is the context key of a record's pathway context.
type pathwayKey struct{}

// PathwayFromContext returns the pathway context carried by ctx: the one
// StartProcess (or CheckpointIn) established for the record being
// processed, which records produced under ctx continue.
func PathwayFromContext(ctx context.Context) (pathway.Context, bool) {
	if ctx == nil {
		return pathway.Context{}, false
	}
	if pc, ok := ctx.Value(pathwayKey{}).(*pathway.Context); ok && pc != nil {
		return *pc, true
	}
	return pathway.Context{}, false
}

// ContextWithPathway returns ctx carrying pc: records produced under it
// continue pc's pathway.
func ContextWithPathway(ctx context.Context, pc pathway.Context) context.Context {
	return context.WithValue(ctx, pathwayKey{}, &pc)
}

// readPathway returns the record's pathway context when it carries exactly
// one valid pathway header; a missing, repeated or invalid header yields
// false (and the pathway starts afresh). It never allocates.
func readPathway(r *kgo.Record, now int64) (pathway.Context, bool) {
	var val []byte
	n := 0
	for i := range r.Headers {
		if r.Headers[i].Key == pathway.HeaderKey {
			val = r.Headers[i].Value
			n++
		}
	}
	if n != 1 {
		return pathway.Context{}, false
	}
	pc, err := pathway.Decode(val, now)
	return pc, err == nil
}

// checkpointIn takes the in checkpoint of a consumed record at now: it
// reads the record's pathway, returns the continued one, and records the
// edge and from-origin latencies with sc's exemplar. qw is the record's
// queue wait, the edge latency of a record that starts its pathway here.
// At a trust boundary the record's pathway header counts for nothing, as
// its trace context does: every record starts a pathway here.
func (t *Tracer) checkpointIn(p *partitionState, r *kgo.Record, now time.Time, qw time.Duration, sc trace.SpanContext) pathway.Context {
	ns := now.UnixNano()
	var parent pathway.Context
	ok := false
	if !t.boundary {
		parent, ok = readPathway(r, ns)
	}
	next := pathway.Next(parent, p.names.in.id, ns)
	if t.metrics == nil {
		return next
	}
	edge, origin := qw, time.Duration(0)
	if ok {
		edge, origin = time.Duration(ns-parent.Prev), time.Duration(ns-parent.Origin)
	}
	s := t.metrics.pathwaySeries(&p.inCache, p.names.in, next.Hash, parent.Hash, ns)
	s.record(edge, origin, t.metrics.exemplarContext(sc), ns)
	s.cohorts.Record(next.Origin)
	return next
}

// checkpointOut takes the out checkpoint of a record produced under ctx at
// now and returns the pathway context its header carries, and the series
// that measured it (nil without metrics): the record is counted by origin
// time there once the broker acknowledged it (sentOut), so that a record
// never written never counts as entered or ended.
func (t *Tracer) checkpointOut(ctx context.Context, p *partitionState, now time.Time, sc trace.SpanContext) (pathway.Context, *pathwaySeries) {
	ns := now.UnixNano()
	parent, ok := PathwayFromContext(ctx)
	next := pathway.Next(parent, p.names.out.id, ns)
	if t.metrics == nil {
		return next, nil
	}
	var edge, origin time.Duration
	if ok && parent.IsValid() {
		edge, origin = time.Duration(ns-parent.Prev), time.Duration(ns-parent.Origin)
	}
	s := t.metrics.pathwaySeries(&p.outCache, p.names.out, next.Hash, parent.Hash, ns)
	s.record(edge, origin, t.metrics.exemplarContext(sc), ns)
	return next, s
}

// CheckpointExpired takes the expired checkpoint of r (pathway.Expired),
// a record taken under ctx (the context StartProcess returned for it) past
// its caller's deadline and not processed: the terminal checkpoint of its
// pathway, measured as the others are (the edge from r's in checkpoint,
// and from the origin), with sc's exemplar. Expired records are rare, so
// the checkpoint is not cached. Without WithPathways or metrics it does
// nothing.
func (t *Tracer) CheckpointExpired(ctx context.Context, r *kgo.Record, sc trace.SpanContext) {
	if !t.pathways || t.metrics == nil {
		return
	}
	ns := clockNow().UnixNano()
	cp := newCheckpoint(t.service, t.group, r.Topic, pathway.Expired)
	parent, ok := PathwayFromContext(ctx)
	next := pathway.Next(parent, cp.id, ns)
	var edge, origin time.Duration
	if ok && parent.IsValid() {
		edge, origin = time.Duration(ns-parent.Prev), time.Duration(ns-parent.Origin)
	}
	var cache atomic.Pointer[pathwaySeries]
	s := t.metrics.pathwaySeries(&cache, cp, next.Hash, parent.Hash, ns)
	s.record(edge, origin, t.metrics.exemplarContext(sc), ns)
	s.cohorts.Record(next.Origin) // a terminal checkpoint: the request ended
}

// CheckpointIn takes the in checkpoint of r, a record processed outside
// StartProcess (a dead-letter replay, say), and returns ctx carrying the
// continued pathway; sc is the span that processes it (for exemplars).
// Without WithPathways it returns ctx.
func (t *Tracer) CheckpointIn(ctx context.Context, r *kgo.Record, sc trace.SpanContext) context.Context {
	if !t.pathways {
		return ctx
	}
	now := time.Now()
	p := t.partition(r.Topic, r.Partition)
	pc := t.checkpointIn(p, r, now, ComputeQueueWait(r, now).Wait, sc)
	return ContextWithPathway(ctx, pc)
}

// recordContext is the context StartProcess returns with pathways on: its
// parent plus the record's pathway context, and, for a record that starts
// no span (unsampled under WithParentBasedSampling), the record's remote
// span context as the current span. It answers those two keys itself, so
// that an unsampled record needs no context.WithValue chain; recordContexts
// come from slabs (see slabs), so StartProcess allocates nothing per
// record.
type recordContext struct {
	context.Context
	remote  remoteSpan // a zero span context: the parent's span is current
	pathway pathway.Context
}

func (c *recordContext) Value(key any) any {
	switch key {
	case pathwayKey{}:
		if c.pathway.IsValid() {
			return &c.pathway
		}
	case spanKey:
		if c.remote.sc.IsValid() {
			return &c.remote
		}
	}
	return c.Context.Value(key)
}

// span returns the record's remote span when it is the current span.
func (c *recordContext) span() trace.Span { return &c.remote }

// remoteSpan is a non-recording span standing for a remote span context,
// as trace.ContextWithRemoteSpanContext makes: a no-op span (the noop
// package's) that reports sc.
type remoteSpan struct {
	embedded.Span
	sc trace.SpanContext
}

func (s *remoteSpan) SpanContext() trace.SpanContext        { return s.sc }
func (*remoteSpan) IsRecording() bool                       { return false }
func (*remoteSpan) End(...trace.SpanEndOption)              {}
func (*remoteSpan) AddEvent(string, ...trace.EventOption)   {}
func (*remoteSpan) AddLink(trace.Link)                      {}
func (*remoteSpan) RecordError(error, ...trace.EventOption) {}
func (*remoteSpan) SetStatus(codes.Code, string)            {}
func (*remoteSpan) SetName(string)                          {}
func (*remoteSpan) SetAttributes(...attribute.KeyValue)     {}
func (*remoteSpan) TracerProvider() trace.TracerProvider    { return noop.NewTracerProvider() }

// rootSpan is the non-recording span of a root a RootSampler did not
// sample: as the tracer provider's own, it reports the provider.
type rootSpan struct {
	remoteSpan
	t *Tracer
}

// TracerProvider returns the Tracer's tracer provider.
func (s *rootSpan) TracerProvider() trace.TracerProvider { return s.t.tp }

// spanKey is the trace package's (unexported) context key of the current
// span, learnt once by asking trace.SpanFromContext to look it up in a
// context that records the key it is asked for. Nil when that did not
// work; StartProcess then takes the allocating path for unsampled records.
var spanKey = func() any {
	var p keyProbe
	trace.SpanFromContext(&p)
	return p.key
}()

type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	if p.key == nil {
		p.key = key
	}
	return nil
}

// slabSize is how many per-record states one slab holds.
const slabSize = 64

// slab is a block of per-record states handed out one by one.
type slab[T any] struct {
	next  atomic.Int32
	items [slabSize]T
}

// slabs hands out per-record states from slabs: a fresh slab is allocated
// when one runs out, so the allocation per record is amortised to one per
// slabSize records (AllocsPerRun reports 0). A state is never reused: a
// context may live on in the records produced under it.
type slabs[T any] struct{ cur atomic.Pointer[slab[T]] }

func (s *slabs[T]) get() *T {
	for {
		sl := s.cur.Load()
		if sl != nil {
			if i := sl.next.Add(1) - 1; i < slabSize {
				return &sl.items[i]
			}
		}
		s.cur.CompareAndSwap(sl, new(slab[T]))
	}
}

// newRecordContext returns a recordContext under parent carrying pc and,
// when remote is valid, the non-recording span of remote as the current
// span. A valid remote needs the trace package's span key (spanKey not
// nil); StartProcess checks that before taking its fast path.
func newRecordContext(s *slabs[recordContext], parent context.Context, remote trace.SpanContext, pc pathway.Context) *recordContext {
	c := s.get()
	c.Context, c.pathway, c.remote.sc = parent, pc, remote
	return c
}
