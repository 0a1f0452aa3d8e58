package kafkatrace

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
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
func (t *Tracer) StartProcess(ctx context.Context, r *kgo.Record, highWatermark int64) (context.Context, trace.Span, QueueWait) {
	now := time.Now()
	qw := ComputeQueueWait(r, now)
	p := t.partition(r.Topic, r.Partition)
	if p.process != nil {
		p.process.count.Add(1)
		p.process.queueWait.record(qw.Wait)
	}

	parent := t.Extract(ctx, r)
	remote := trace.SpanContextFromContext(parent)
	if t.parentBased && remote.IsValid() && !remote.IsSampled() {
		return parent, trace.SpanFromContext(parent), qw
	}

	// The process span is started first: its sampling decision is the
	// record's, so an unsampled record never builds the wait span or any
	// attribute beyond the few a sampler sees at start. (Passing all of
	// them at start measured slower: the start option copies them.)
	startOpts := []trace.SpanStartOption{
		consumerKind,
		trace.WithTimestamp(now),
		trace.WithAttributes(semconv.MessagingSystemKafka, semconv.MessagingOperationTypeProcess, semconv.MessagingDestinationName(r.Topic)),
	}
	if remote.IsValid() {
		startOpts = append(startOpts, trace.WithLinks(trace.Link{SpanContext: remote}))
	}
	ctx, span := t.tracer.Start(parent, p.names.process, startOpts...)
	if !span.IsRecording() {
		return ctx, span, qw
	}
	attrs := t.consumedAttrs(p, r, 2)
	attrs = append(attrs, semconv.MessagingOperationName(OpProcess))
	if !remote.IsValid() && (HeaderCarrier{Record: r}).Get(traceparentHeader) != "" {
		attrs = append(attrs, TraceContextInvalidAttr.Bool(true))
	}
	span.SetAttributes(attrs...)

	// The wait span is the process span's sibling under the producer's span;
	// when the record starts a new trace it is the process span's child, so
	// both stay in one trace.
	waitParent := parent
	if !remote.IsValid() {
		waitParent = ctx
	}
	attrs = t.consumedAttrs(p, r, 5)
	attrs = append(attrs,
		TimestampTypeAttr.String(qw.TimestampType),
		QueueWaitMSAttr.Float64(float64(qw.Wait)/float64(time.Millisecond)),
	)
	if highWatermark >= 0 {
		attrs = append(attrs, OffsetLagAttr.Int64(max(highWatermark-r.Offset-1, 0)))
	}
	if qw.Skew > 0 {
		attrs = append(attrs, ClockSkewAttr.Bool(true), ClockSkewMSAttr.Float64(float64(qw.Skew)/float64(time.Millisecond)))
	}
	_, wait := t.tracer.Start(waitParent, p.names.wait,
		internalKind,
		trace.WithTimestamp(qw.Start),
		trace.WithAttributes(semconv.MessagingSystemKafka, semconv.MessagingDestinationName(r.Topic)))
	wait.SetAttributes(attrs...)
	wait.End(trace.WithTimestamp(qw.End))
	return ctx, span, qw
}

// Span kinds as prebuilt options: building them per record allocates.
var (
	consumerKind = trace.WithSpanKind(trace.SpanKindConsumer)
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
)

// consumedAttrs returns the attributes shared by wait and process spans
// beyond messaging.system and the destination (set at start): the
// partition's cached ones and the record's own, with room for extra more.
func (t *Tracer) consumedAttrs(p *partitionState, r *kgo.Record, extra int) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, len(p.consumed)+3+extra)
	attrs = append(attrs, p.consumed...)
	attrs = append(attrs,
		semconv.MessagingKafkaOffset(int(r.Offset)),
		semconv.MessagingMessageBodySize(len(r.Value)),
	)
	if r.Key != nil {
		attrs = append(attrs, keyHash(r.Key))
	}
	return attrs
}

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
	t.recordProcessed(r.Topic, r.Partition, time.Since(start), errType)
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
