// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/global"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
)

// ScopeName is the instrumentation scope of the consumer runtime's own
// metrics (otelnames.MetricRequestsExpired).
const ScopeName = "github.com/kretrieve/kretrieve/consumers"

// WithMeterProvider sets the meter provider of the worker's own metrics
// (otelnames.MetricRequestsExpired); nil is ignored. Default: the global
// provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(w *Worker) {
		if mp != nil {
			w.mp = mp
		}
	})
}

// newExpiredCounter creates the worker's otelnames.MetricRequestsExpired
// counter and the attributes of its series.
func (w *Worker) newExpiredCounter() error {
	c, err := global.MeterProvider(w.mp).Meter(ScopeName).Int64Counter(otelnames.MetricRequestsExpired,
		metric.WithUnit(otelnames.MetricRequestsExpiredUnit),
		metric.WithDescription("Records taken past their caller's deadline: not processed, committed, nothing produced."))
	if err != nil {
		return fmt.Errorf("worker: %s: %w", otelnames.MetricRequestsExpired, err)
	}
	w.expiredCounter = c
	w.expiredAttrs = metric.WithAttributeSet(attribute.NewSet(semconv.MessagingSystemKafka,
		semconv.MessagingDestinationName(w.cfg.Topic), semconv.MessagingConsumerGroupName(w.cfg.Group)))
	return nil
}

// headerKV is a record header's key and value, for messages.ReadDeadline.
func headerKV(h *kgo.RecordHeader) (string, []byte) { return h.Key, h.Value }

// readDeadline returns r's deadline (messages.HeaderDeadline) read at now:
// zero when it has none or it is ignored (messages.ReadDeadline's rules).
func readDeadline(r *kgo.Record, now time.Time) time.Time {
	d, _, ok, _ := messages.ReadDeadline(r.Headers, headerKV, now)
	if !ok {
		return time.Time{}
	}
	return d
}

// Expired returns how many records the worker took past their deadline
// and did not process (counted in Processed too).
func (w *Worker) Expired() int64 { return w.expired.Load() }

// expire settles msg, taken past its deadline, without running the chain:
// the process span says so, the pathway ends at an expired checkpoint,
// the counter counts it, and the record is committed with nothing
// produced (its caller was already told).
func (w *Worker) expire(ctx context.Context, msg *Message, span trace.Span) {
	late := msg.QueueWait.End.Sub(msg.Deadline)
	if span.IsRecording() {
		span.SetAttributes(otelnames.DeadlineExpired.Bool(true),
			otelnames.DeadlineLateMS.Float64(float64(late)/float64(time.Millisecond)))
	}
	w.tracer.CheckpointExpired(ctx, msg.Record, span.SpanContext())
	w.expiredCounter.Add(ctx, 1, w.expiredAttrs)
	w.expired.Add(1)
	w.logger.DebugContext(ctx, "record expired: taken past its deadline, not processed",
		"partition", msg.Record.Partition, "offset", msg.Record.Offset, "late", late)
}

// carryDeadline gives out its input's deadline d (the normalized
// messages.HeaderDeadline value: a clamped one stays clamped), replacing
// any deadline header out sets itself: a stage cannot extend its caller's
// deadline. A zero d carries nothing.
func carryDeadline(out *kgo.Record, d []byte) {
	if len(d) == 0 {
		return
	}
	kept := make([]kgo.RecordHeader, 0, len(out.Headers)+1)
	for _, h := range out.Headers {
		if h.Key != messages.HeaderDeadline {
			kept = append(kept, h)
		}
	}
	out.Headers = append(kept, kgo.RecordHeader{Key: messages.HeaderDeadline, Value: d})
}
