// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"sync"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// StartProcess is called when a worker starts processing r. It records the
// queue-wait span ("wait <topic>", from the record timestamp until now) and
// the queue-wait histogram, and starts the "process <topic>" CONSUMER span as
// a child of the context found in the record headers, linked to it as well.
//
// ctx should be the worker's run context, not r.Context: records fetched by
// franz-go carry a background context, and handlers must see cancellation.
// highWatermark is the partition's high watermark from the fetch that returned
// r (use -1 when unknown). The caller ends the returned span, with EndProcess.
//
// With [WithParentBasedSampling], a record whose headers carry an unsampled
// trace context gets no spans: the returned context carries the remote
// context (so handlers' spans and downstream records stay unsampled in the
// same trace) and the returned span is its non-recording span.
//
// With [WithTrustBoundary], the process span is instead a new root, sampled
// by the tracer provider's sampler alone and linked to the record's
// context, and the returned context carries only the trusted members of
// the record's baggage; the wait span is the process span's child.
func (t *Tracer) StartProcess(ctx context.Context, r *kgo.Record, highWatermark int64) (context.Context, trace.Span, QueueWait) {
	pctx, span, qw, _ := t.StartProcessRemote(ctx, r, highWatermark)
	return pctx, span, qw
}

// StartProcessRemote is StartProcess that also returns the span context
// found in r's headers (invalid when there is none or it does not parse),
// the one the process span is a child of or linked to: a caller that links
// to it too, as a dead letter does, need not extract it again.
func (t *Tracer) StartProcessRemote(ctx context.Context, r *kgo.Record, highWatermark int64) (context.Context, trace.Span, QueueWait, trace.SpanContext) {
	now := clockNow()
	qw := ComputeQueueWait(r, now)
	p := t.partition(r.Topic, r.Partition)
	if p.process != nil {
		p.process.count.Add(1)
	}

	if t.boundary {
		pctx, span, qw, remote := t.startAtBoundary(ctx, r, highWatermark, p, qw, now)
		pctx, span, qw = t.started(pctx, span, r, p, qw, now)
		return pctx, span, qw, remote
	}
	if remote, ok := t.unsampled(r); ok && spanKey != nil {
		// The common case at low sampling rates, without allocation:
		// the remote context is the current span of a recordContext.
		pc := pathway.Context{}
		if t.pathways {
			pc = t.checkpointIn(p, r, now, qw.Wait, remote)
		}
		if p.process != nil {
			p.process.queueWait.record(qw.Wait, t.metrics.exemplarContext(remote))
		}
		rc := newRecordContext(&p.records, ctx, remote, pc)
		return rc, rc.span(), qw, remote
	}
	parent := t.Extract(ctx, r)
	remote := trace.SpanContextFromContext(parent)
	if t.parentBased && remote.IsValid() && !remote.IsSampled() {
		pctx, span, qw := t.started(parent, trace.SpanFromContext(parent), r, p, qw, now)
		return pctx, span, qw, remote
	}
	pctx, span, qw := t.startProcess(parent, remote, r, highWatermark, p, qw, now)
	pctx, span, qw = t.started(pctx, span, r, p, qw, now)
	return pctx, span, qw, remote
}

// unsampled returns the remote span context of r when the fast path of
// StartProcess applies: parent-based sampling, the W3C propagator, one
// valid unsampled traceparent header and no tracestate or baggage header
// (which take the library's path).
func (t *Tracer) unsampled(r *kgo.Record) (trace.SpanContext, bool) {
	if !t.parentBased || !t.w3c {
		return trace.SpanContext{}, false
	}
	var tp []byte
	for i := range r.Headers {
		switch r.Headers[i].Key {
		case tracecontext.TraceparentHeader:
			if tp != nil {
				return trace.SpanContext{}, false
			}
			tp = r.Headers[i].Value
		case tracecontext.TracestateHeader, tracecontext.BaggageHeader:
			return trace.SpanContext{}, false
		}
	}
	if len(tp) != tracecontext.TraceparentLen {
		return trace.SpanContext{}, false
	}
	sc, ok := tracecontext.ParseTraceparent(unsafe.String(unsafe.SliceData(tp), len(tp)))
	if !ok || sc.IsSampled() {
		return trace.SpanContext{}, false
	}
	return sc, true
}

// started completes StartProcess once span (recording or not) stands for
// r's processing under ctx: it records the queue wait, and with pathways
// takes r's in checkpoint and returns a context carrying the pathway.
func (t *Tracer) started(ctx context.Context, span trace.Span, r *kgo.Record, p *partitionState, qw QueueWait, now time.Time) (context.Context, trace.Span, QueueWait) {
	sc := span.SpanContext()
	if p.process != nil {
		p.process.queueWait.record(qw.Wait, t.metrics.exemplarContext(sc))
	}
	if !t.pathways {
		return ctx, span, qw
	}
	pc := t.checkpointIn(p, r, now, qw.Wait, sc)
	return newRecordContext(&p.records, ctx, trace.SpanContext{}, pc), span, qw
}

// startProcess starts the process span under parent (whose remote span
// context is remote) and records the wait span. The process span is a new
// root at a trust boundary.
//
// Both spans start with the few attributes a sampler needs, prebuilt per
// topic, and get the rest in one SetAttributes once they are known to be
// recording: the SDK then copies each attribute once, and an unsampled
// record builds none. The attribute slices are pooled: the SDK copies what
// it is given.
func (t *Tracer) startProcess(parent context.Context, remote trace.SpanContext, r *kgo.Record, highWatermark int64, p *partitionState, qw QueueWait, now time.Time) (context.Context, trace.Span, QueueWait) {
	startOpts := make([]trace.SpanStartOption, 0, 5)
	startOpts = append(startOpts, consumerKind, trace.WithTimestamp(now), p.processStart)
	if remote.IsValid() {
		startOpts = append(startOpts, trace.WithLinks(trace.Link{SpanContext: remote}))
	}
	if t.boundary {
		startOpts = append(startOpts, newRoot)
	}
	ctx, span := t.tracer.Start(parent, p.names.process, startOpts...)
	if !span.IsRecording() {
		return ctx, span, qw
	}
	buf := getAttrs()
	defer putAttrs(buf)
	// The record key's hash is shared by the process and wait spans.
	var key attribute.KeyValue
	if r.Key != nil {
		key = keyHash(r.Key)
	}
	attrs := t.appendProcessAttrs(*buf, p, r, remote, key)
	span.SetAttributes(attrs...)
	if len(t.bagAttrs) > 0 {
		t.setBaggageAttrs(parent, span)
	}

	// The wait span is the process span's sibling under the producer's span;
	// when the record starts a new trace it is the process span's child, so
	// both stay in one trace.
	waitParent := parent
	if !remote.IsValid() || t.boundary {
		waitParent = ctx
	}
	_, wait := t.tracer.Start(waitParent, p.names.wait, internalKind, trace.WithTimestamp(qw.Start), p.names.waitAttrs)
	if wait.IsRecording() {
		attrs = t.appendConsumedAttrs(attrs[:0], p, r, key)
		attrs = append(attrs,
			otelnames.QueueWaitTimestampType.String(qw.TimestampType),
			otelnames.QueueWaitMS.Float64(float64(qw.Wait)/float64(time.Millisecond)),
		)
		if highWatermark >= 0 {
			attrs = append(attrs, otelnames.QueueWaitOffsetLag.Int64(max(highWatermark-r.Offset-1, 0)))
		}
		if qw.Skew > 0 {
			attrs = append(attrs, otelnames.QueueWaitClockSkew.Bool(true), otelnames.QueueWaitClockSkewMS.Float64(float64(qw.Skew)/float64(time.Millisecond)))
		}
		wait.SetAttributes(attrs...)
	}
	wait.End(trace.WithTimestamp(qw.End))
	*buf = attrs[:0]
	return ctx, span, qw
}

// appendProcessAttrs appends the process span's attributes beyond those
// it starts with (partitionState.processStart).
func (t *Tracer) appendProcessAttrs(attrs []attribute.KeyValue, p *partitionState, r *kgo.Record, remote trace.SpanContext, key attribute.KeyValue) []attribute.KeyValue {
	attrs = append(attrs, p.processRest...)
	attrs = t.appendRecordAttrs(attrs, r, key)
	if !remote.IsValid() && (tracecontext.HeaderCarrier{Record: r}).Get(tracecontext.TraceparentHeader) != "" {
		attrs = append(attrs, otelnames.TraceContextInvalid.Bool(true))
	}
	return attrs
}

// appendConsumedAttrs appends the wait span's attributes shared with the
// process span beyond messaging.system and the destination: the
// partition's cached ones and the record's own; key is the record key's
// hash attribute (the zero KeyValue for a record without a key).
func (t *Tracer) appendConsumedAttrs(attrs []attribute.KeyValue, p *partitionState, r *kgo.Record, key attribute.KeyValue) []attribute.KeyValue {
	attrs = append(attrs, p.consumed...)
	return t.appendRecordAttrs(attrs, r, key)
}

// appendRecordAttrs appends a consumed record's own attributes: offset,
// body size and key hash.
func (t *Tracer) appendRecordAttrs(attrs []attribute.KeyValue, r *kgo.Record, key attribute.KeyValue) []attribute.KeyValue {
	attrs = append(attrs,
		semconv.MessagingKafkaOffset(int(r.Offset)),
		semconv.MessagingMessageBodySize(len(r.Value)),
	)
	if key.Valid() {
		attrs = append(attrs, key)
	}
	return attrs
}

// attrPool recycles the attribute slices spans are started with: the SDK
// copies attributes into the span, so the slice is free once Start or
// SetAttributes returns.
var attrPool = sync.Pool{New: func() any {
	s := make([]attribute.KeyValue, 0, 24)
	return &s
}}

func getAttrs() *[]attribute.KeyValue { return attrPool.Get().(*[]attribute.KeyValue) }

func putAttrs(s *[]attribute.KeyValue) {
	if cap(*s) > 64 { // keep the pool's slices small
		return
	}
	clear((*s)[:cap(*s)])
	*s = (*s)[:0]
	attrPool.Put(s)
}

// Span kinds as prebuilt options: building them per record allocates.
var (
	consumerKind = trace.WithSpanKind(trace.SpanKindConsumer)
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	newRoot      = trace.WithNewRoot()
)

// EndProcess ends the process span of r started by StartProcess (whose
// QueueWait.End is start), recording err (when not nil) as the span's error
// with the given low-cardinality error.type, and records
// messaging.process.duration.
func (t *Tracer) EndProcess(ctx context.Context, r *kgo.Record, start time.Time, span trace.Span, err error, errType string) {
	if err == nil {
		errType = ""
	} else if errType == "" {
		errType = "_OTHER"
	}
	t.recordProcessed(r.Topic, r.Partition, time.Since(start), errType, span.SpanContext())
	EndProcess(span, err, errType)
}

// EndProcess ends a process span, recording err (when not nil) as the span's
// error with the given low-cardinality error.type. Tracer.EndProcess also
// records the process duration metric.
func EndProcess(span trace.Span, err error, errType string) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
	}
	span.End()
}
