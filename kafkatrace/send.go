// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/tracecontext"
)

var (
	_ kgo.HookProduceRecordBuffered   = (*Tracer)(nil)
	_ kgo.HookProduceRecordUnbuffered = (*Tracer)(nil)
)

// OnProduceRecordBuffered starts the "send <topic>" span as a child of the
// record's Context, injects its context into the record headers (replacing any
// traceparent, tracestate and baggage headers already there) and stores the
// span and the produce time in r.Context for OnProduceRecordUnbuffered.
//
// The span starts with the attributes a sampler needs (the messaging
// conventions' sampling-relevant ones known before the partition: system,
// operation name and type, destination, server) and gets all the others in one
// go at the acknowledgement, when it is recording: the SDK then copies each
// attribute once, and an unsampled record builds none.
//
// With [WithParentBasedSampling], a record whose Context is unsampled gets no
// span: the Context's trace context is injected as it is. A record whose
// Context has no span starts a new trace: its send span starts with only
// its kind (the sampler decides on the trace id) and gets all its
// attributes at the acknowledgement; with [WithRootSampler] an unsampled
// one is not started at all.
func (t *Tracer) OnProduceRecordBuffered(r *kgo.Record) {
	ctx := r.Context
	if ctx == nil {
		ctx = context.Background()
	}
	start := clockNow()
	sc := t.sends.get()
	sc.start = start
	// The record's span, looked up once for both checks.
	parent := trace.SpanFromContext(ctx)
	if t.skip(parent) {
		sc.Context = ctx
		t.inject(ctx, r, sc)
		r.Context = sc
		return
	}
	if psc := parent.SpanContext(); t.parentBased && !psc.IsValid() && ctx.Value(linksKey{}) == nil {
		t.startRoot(ctx, psc, r, sc)
		return
	}
	// The span starts when the pathway checkpoint is taken, so that the
	// two agree exactly.
	opts := make([]trace.SpanStartOption, 0, 4)
	opts = append(opts, producerKind, trace.WithTimestamp(start), t.namesFor(r.Topic).sendAttrs)
	if links, ok := ctx.Value(linksKey{}).([]trace.Link); ok {
		opts = append(opts, trace.WithLinks(links...))
	}
	ctx, span := t.tracer.Start(ctx, t.namesFor(r.Topic).send, opts...)
	sc.Context, sc.span = ctx, span
	t.inject(ctx, r, sc)
	r.Context = sc
}

// startRoot starts the send span of r as the root of a new trace under a
// parent-based sampler, which decides on the trace id alone: the span
// starts with nothing but its kind, so that an unsampled root (99% of them
// at 1%) costs only the decision, and gets all its attributes at the
// acknowledgement when it is recording. With a RootSampler an unsampled
// root starts no span at all: sc carries the non-recording span the
// provider would have returned. psc is ctx's span context.
func (t *Tracer) startRoot(ctx context.Context, psc trace.SpanContext, r *kgo.Record, sc *sendContext) {
	name := t.partition(r.Topic, r.Partition).names.send // cached, unlike namesFor
	if t.root != nil && !psc.TraceID().IsValid() {
		root, sctx, sampled := t.root.SampleRoot(ctx, name, trace.SpanKindProducer)
		if !sampled {
			rs := t.roots.get()
			rs.sc, rs.t = root, t
			sc.Context, sc.root, sc.span = ctx, rs, rs
			t.inject(sc, r, sc)
			r.Context = sc
			return
		}
		ctx = sctx
	}
	ctx, span := t.tracer.Start(ctx, name, rootSendOpts...)
	sc.Context, sc.span, sc.bare = ctx, span, true
	t.inject(ctx, r, sc)
	r.Context = sc
}

// appendSendAttrs appends the send span's attributes beyond those it
// starts with (topicNames.sendStart), known before the ack.
func (t *Tracer) appendSendAttrs(attrs []attribute.KeyValue, r *kgo.Record) []attribute.KeyValue {
	attrs = append(attrs, t.client...)
	attrs = append(attrs, semconv.MessagingMessageBodySize(len(r.Value)))
	if r.Key != nil {
		attrs = append(attrs, keyHash(r.Key))
	}
	return attrs
}

type linksKey struct{}

// ContextWithLinks returns ctx carrying links for the send span of a record
// produced with it as Record.Context: a dead letter's send span links the
// trace of the record that failed, for instance.
func ContextWithLinks(ctx context.Context, links ...trace.Link) context.Context {
	return context.WithValue(ctx, linksKey{}, links)
}

// sendContext is a produced record's Context between the two produce hooks:
// the send span's context plus the produce time and the span itself (nil
// when none was started). One allocation instead of a context.WithValue
// chain.
type sendContext struct {
	context.Context
	start time.Time
	span  trace.Span
	// bare: span started without any attribute (a new trace under a
	// parent-based sampler), so the three start attributes go in at the
	// ack with the others.
	bare bool
	// traceparent, pathway and headers are the storage of the headers
	// the hook writes: a record without headers gets headers as its
	// header slice.
	traceparent [tracecontext.TraceparentLen]byte
	pathway     [pathway.Size]byte
	headers     [3]kgo.RecordHeader
	// out is the series of the record's out checkpoint (nil: none), which
	// counts the record by its origin once acknowledged.
	out    *pathwaySeries
	origin int64
	// root is the non-recording span of a root that a RootSampler did
	// not sample (nil: none), the context's current span then.
	root *rootSpan
}

// Value answers the current span for an unsampled root (see root), and
// leaves every other key to the parent.
func (c *sendContext) Value(key any) any {
	if key == spanKey && c.root != nil {
		return c.root
	}
	return c.Context.Value(key)
}

var producerKind = trace.WithSpanKind(trace.SpanKindProducer)

// rootSendOpts are the start options of a root send span under a
// parent-based sampler, prebuilt so that passing them does not allocate.
var rootSendOpts = []trace.SpanStartOption{producerKind}

// OnProduceRecordUnbuffered ends the send span at the broker's acknowledgement,
// with the partition and offset, or records the produce error.
func (t *Tracer) OnProduceRecordUnbuffered(r *kgo.Record, err error) {
	sc, ok := r.Context.(*sendContext)
	if !ok { // not produced through OnProduceRecordBuffered
		return
	}
	errType := ""
	if err != nil {
		errType = errorType(err)
	}
	span := sc.span
	var spanCtx trace.SpanContext
	if span != nil {
		spanCtx = span.SpanContext()
	}
	t.recordSent(r.Topic, r.Partition, time.Since(sc.start), errType, spanCtx)
	if sc.out != nil && err == nil {
		sc.out.cohorts.Record(sc.origin)
	}
	if span == nil || !span.IsRecording() {
		return
	}
	buf := getAttrs()
	attrs := *buf
	if sc.bare {
		attrs = append(attrs, t.namesFor(r.Topic).sendStart...)
	}
	attrs = t.appendSendAttrs(attrs, r)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	} else {
		attrs = append(attrs, t.partition(r.Topic, r.Partition).partitionID, semconv.MessagingKafkaOffset(int(r.Offset)))
	}
	span.SetAttributes(attrs...)
	*buf = attrs[:0]
	putAttrs(buf)
	span.End()
}

// Inject writes the trace context of ctx into the record headers. Existing
// headers with the propagator's keys are removed first, so the record ends up
// with exactly one of each and never a stale value from an earlier hop.
func (t *Tracer) Inject(ctx context.Context, r *kgo.Record) {
	t.inject(ctx, r, nil)
}

// inject is Inject, and with pathways the pathway header of the record's
// out checkpoint, writing the headers into sc's storage when sc is not
// nil (the produce hook).
func (t *Tracer) inject(ctx context.Context, r *kgo.Record, sc *sendContext) {
	if sc != nil && len(r.Headers) == 0 {
		r.Headers = sc.headers[:0]
	}
	tracecontext.HeaderCarrier{Record: r}.Remove(t.ownKeys...)
	span := trace.SpanContextFromContext(ctx)
	if !t.w3c {
		t.prop.Inject(ctx, tracecontext.HeaderCarrier{Record: r})
	} else {
		if span.IsValid() {
			if ts := span.TraceState().String(); ts != "" {
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: tracecontext.TracestateHeader, Value: []byte(ts)})
			}
			var tp []byte
			if sc != nil {
				tp = sc.traceparent[:0]
			}
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: tracecontext.TraceparentHeader, Value: tracecontext.AppendTraceparent(tp, span)})
		}
		if t.baggage {
			if b := baggage.FromContext(ctx); b.Len() > 0 {
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: tracecontext.BaggageHeader, Value: []byte(b.String())})
			}
		}
	}
	if !t.pathways || sc == nil {
		return
	}
	pc, out := t.checkpointOut(ctx, t.partition(r.Topic, r.Partition), sc.start, span)
	sc.out, sc.origin = out, pc.Origin
	pc.Encode(&sc.pathway)
	r.Headers = append(r.Headers, kgo.RecordHeader{Key: pathway.HeaderKey, Value: sc.pathway[:]})
}

// Extract returns ctx carrying the remote span context and baggage found in
// the record headers. Missing or malformed headers leave ctx without a remote
// span, so spans started from it become new roots.
//
// Headers come from outside and are limited before anything parses them
// (see [tracecontext.LimitPropagator]): when a key appears more than once the last
// header wins; tracestate is cut to whole members within 512 characters and
// 32 members; baggage over 8192 bytes is dropped; the cost is bounded
// whatever the headers' sizes.
func (t *Tracer) Extract(ctx context.Context, r *kgo.Record) context.Context {
	c := limitedHeaders{tracecontext.HeaderCarrier{Record: r}}
	if !t.w3c {
		return t.prop.Extract(ctx, c)
	}
	sc, ok := tracecontext.ParseTraceparent(c.HeaderCarrier.Get(tracecontext.TraceparentHeader))
	if !ok { // absent, invalid or another version: the library decides
		return t.prop.Extract(ctx, c)
	}
	if ts := tracecontext.LimitTraceState(c.HeaderCarrier.Get(tracecontext.TracestateHeader)); ts != "" {
		// As the library does: a tracestate that does not parse is
		// dropped, the traceparent still counts.
		if state, err := trace.ParseTraceState(ts); err == nil {
			sc = sc.WithTraceState(state)
		}
	}
	ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	if t.baggage && c.HeaderCarrier.Get(tracecontext.BaggageHeader) != "" {
		ctx = propagation.Baggage{}.Extract(ctx, c)
	}
	return ctx
}

func keyHash(key []byte) attribute.KeyValue {
	return otelnames.MessageKeyHash.String(strconv.FormatUint(xxhash.Sum64(key), 16))
}

// ErrorType returns a low-cardinality error.type value for a produce
// error: the Kafka error code name, the context error, or "_OTHER".
func ErrorType(err error) string { return errorType(err) }

// errorType returns a low-cardinality error.type value for a produce error:
// the Kafka error code name, the context error, or "_OTHER".
func errorType(err error) string {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return ke.Message
	case errors.Is(err, context.Canceled):
		return "context_canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context_deadline_exceeded"
	case errors.Is(err, kgo.ErrRecordTimeout):
		return "record_timeout"
	case errors.Is(err, kgo.ErrClientClosed):
		return "client_closed"
	}
	return "_OTHER"
}
