package kafkatrace

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

const traceparentHeader = "traceparent"

// StartProcess is called when a worker starts processing r. It records the
// queue-wait span ("wait <topic>", from the record timestamp until now) and
// the queue-wait histogram, and starts the "process <topic>" CONSUMER span as
// a child of the context found in the record headers, linked to it as well.
//
// ctx should be the worker's run context, not r.Context: records fetched by
// franz-go carry a background context, and handlers must see cancellation.
// highWatermark is the partition's high watermark from the fetch that returned
// r (use -1 when unknown). The caller ends the returned span, with EndProcess.
func (t *Tracer) StartProcess(ctx context.Context, r *kgo.Record, highWatermark int64) (context.Context, trace.Span, QueueWait) {
	now := time.Now()
	qw := ComputeQueueWait(r, now)
	t.queueWait.Record(ctx, qw.Wait.Seconds(), t.partitionMetricAttrs(r.Topic, r.Partition))

	parent := t.Extract(ctx, r)
	remote := trace.SpanContextFromContext(parent)
	names := t.namesFor(r.Topic)

	attrs := make([]attribute.KeyValue, 0, len(t.common)+14)
	attrs = append(attrs, t.common...)
	attrs = append(attrs,
		semconv.MessagingDestinationName(r.Topic),
		semconv.MessagingDestinationPartitionID(strconv.Itoa(int(r.Partition))),
		semconv.MessagingKafkaOffset(int(r.Offset)),
		semconv.MessagingMessageBodySize(len(r.Value)),
	)
	if t.group != "" {
		attrs = append(attrs, semconv.MessagingConsumerGroupName(t.group))
	}
	if r.Key != nil {
		attrs = append(attrs, keyHash(r.Key))
	}
	base := len(attrs)

	// The wait span: its own attributes after the shared ones.
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
	_, wait := t.tracer.Start(parent, names.wait,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(qw.Start),
		trace.WithAttributes(attrs...))
	wait.End(trace.WithTimestamp(qw.End))

	// The process span: shared attributes plus the operation.
	attrs = append(attrs[:base], semconv.MessagingOperationTypeProcess, semconv.MessagingOperationName(OpProcess))
	startOpts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithTimestamp(now),
		trace.WithAttributes(attrs...),
	}
	if remote.IsValid() {
		startOpts = append(startOpts, trace.WithLinks(trace.Link{SpanContext: remote}))
	} else if (HeaderCarrier{Record: r}).Get(traceparentHeader) != "" {
		startOpts = append(startOpts, trace.WithAttributes(TraceContextInvalidAttr.Bool(true)))
	}
	ctx, span := t.tracer.Start(parent, names.process, startOpts...)
	return ctx, span, qw
}

// EndProcess ends a process span, recording err (when not nil) as the span's
// error with the given low-cardinality error.type.
func EndProcess(span trace.Span, err error, errType string) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
	}
	span.End()
}
