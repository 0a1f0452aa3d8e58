package kafkatrace

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"
)

// messagingMetrics are the OTel messaging client metrics per semconv:
// messaging.client.sent.messages and messaging.client.operation.duration
// (send), messaging.client.consumed.messages and messaging.process.duration
// (process).
type messagingMetrics struct {
	sent     messagingconv.ClientSentMessages
	consumed messagingconv.ClientConsumedMessages
	opDur    messagingconv.ClientOperationDuration
	procDur  messagingconv.ProcessDuration
}

func newMessagingMetrics(meter metric.Meter) messagingMetrics {
	var m messagingMetrics
	var err error
	// On error the API hands back no-op instruments: report and go on.
	if m.sent, err = messagingconv.NewClientSentMessages(meter); err != nil {
		otel.Handle(err)
	}
	if m.consumed, err = messagingconv.NewClientConsumedMessages(meter); err != nil {
		otel.Handle(err)
	}
	if m.opDur, err = messagingconv.NewClientOperationDuration(meter); err != nil {
		otel.Handle(err)
	}
	if m.procDur, err = messagingconv.NewProcessDuration(meter); err != nil {
		otel.Handle(err)
	}
	return m
}

// metricKey identifies a cached attribute set.
type metricKey struct {
	op        string
	topic     string
	partition int32
}

// metricSet returns the cached attribute set of op on a partition, so that
// recording a measurement does not build one.
func (t *Tracer) metricSet(op, topic string, partition int32) attribute.Set {
	k := metricKey{op, topic, partition}
	if s, ok := t.sets.Load(k); ok {
		return s.(attribute.Set)
	}
	s, _ := t.sets.LoadOrStore(k, t.buildSet(op, topic, partition, ""))
	return s.(attribute.Set)
}

func (t *Tracer) buildSet(op, topic string, partition int32, errType string) attribute.Set {
	kvs := []attribute.KeyValue{
		semconv.MessagingSystemKafka,
		semconv.MessagingOperationName(op),
		semconv.MessagingDestinationName(topic),
	}
	if partition >= 0 {
		kvs = append(kvs, semconv.MessagingDestinationPartitionID(strconv.Itoa(int(partition))))
	}
	if op == OpProcess && t.group != "" {
		kvs = append(kvs, semconv.MessagingConsumerGroupName(t.group))
	}
	if errType != "" {
		kvs = append(kvs, semconv.ErrorTypeKey.String(errType))
	}
	return attribute.NewSet(kvs...)
}

// recordSent counts a produced record and the time to its acknowledgement.
func (t *Tracer) recordSent(ctx context.Context, topic string, partition int32, d time.Duration, errType string) {
	set := t.metricSet(OpSend, topic, partition)
	if errType != "" {
		set = t.buildSet(OpSend, topic, -1, errType) // failed records have no partition
	}
	t.metrics.sent.AddSet(ctx, 1, set)
	t.metrics.opDur.RecordSet(ctx, d.Seconds(), set)
}

// recordProcessed records the duration of processing one record.
func (t *Tracer) recordProcessed(ctx context.Context, topic string, partition int32, d time.Duration, errType string) {
	set := t.metricSet(OpProcess, topic, partition)
	if errType != "" {
		set = t.buildSet(OpProcess, topic, partition, errType)
	}
	t.metrics.procDur.RecordSet(ctx, d.Seconds(), set)
}
