// SPDX-License-Identifier: Apache-2.0

package producer

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/redact"
)

// Receipt is the broker's acknowledgement of a published request.
type Receipt struct {
	RequestID string
	// TraceID is the hex trace id of the request, "" when tracing is off.
	TraceID   string
	Partition int32
	Offset    int64
}

// Publisher produces requests to the requests topic.
type Publisher struct {
	client *kgo.Client
	topic  string
}

// NewPublisher returns a Publisher producing to topic through client, which
// it then owns (see Close). Install a kafkatrace.Tracer on the client
// (kgo.WithHooks) to get send spans and trace headers.
func NewPublisher(client *kgo.Client, topic string) *Publisher {
	return &Publisher{client: client, topic: topic}
}

// Publish validates and encodes req and produces it, keyed by its request id,
// without waiting; done is called with the acknowledgement. Encoding errors
// are returned at once and done is not called.
//
// The record carries a fresh random messages.HeaderCorrelation value, as
// every request published by this package does, and ctx's deadline, when
// it has one, as messages.HeaderDeadline.
func (p *Publisher) Publish(ctx context.Context, req messages.Request, done func(Receipt, error)) error {
	return p.publish(ctx, req, newCorrelation(), done)
}

// publish is Publish with the messages.HeaderCorrelation value corr.
func (p *Publisher) publish(ctx context.Context, req messages.Request, corr string, done func(Receipt, error)) error {
	value, err := encode(req)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	p.produce(ctx, req, value, corr, done)
	return nil
}

// encode validates req and encodes it: the one place a request on its way
// to Kafka is validated (messages.EncodeRequest), whether it comes through
// Publish or Client.Start, from the gateway or any other caller.
func encode(req messages.Request) ([]byte, error) {
	return messages.EncodeRequest(req)
}

// produce produces value, the encoded req, keyed by its request id with
// the messages.HeaderCorrelation value corr, without waiting; done is called
// with the acknowledgement. When ctx has a deadline, the record carries it
// (messages.HeaderDeadline): the stages do not work on it past that time.
//
// Neither the record nor the produce call carries ctx's cancellation, only
// its values (the trace): franz-go fails every record buffered behind one
// whose context ends, so a caller that gives up (or whose deadline comes
// first) would fail the requests of callers behind it, never published. A
// record is bounded by the client's own limits instead
// (kgo.RecordDeliveryTimeout), which fail it only when it was not written.
func (p *Publisher) produce(ctx context.Context, req messages.Request, value []byte, corr string, done func(Receipt, error)) {
	headers := []kgo.RecordHeader{{Key: messages.HeaderCorrelation, Value: []byte(corr)}}
	if d, ok := ctx.Deadline(); ok {
		headers = append(headers, kgo.RecordHeader{Key: messages.HeaderDeadline, Value: []byte(messages.FormatDeadline(d))})
	}
	ctx = context.WithoutCancel(ctx)
	rec := &kgo.Record{Topic: p.topic, Key: []byte(req.RequestID), Value: value, Context: ctx, Headers: headers}
	p.client.Produce(ctx, rec, func(r *kgo.Record, err error) {
		rcpt := Receipt{RequestID: req.RequestID, Partition: r.Partition, Offset: r.Offset}
		if sc := trace.SpanContextFromContext(r.Context); sc.IsValid() {
			rcpt.TraceID = sc.TraceID().String()
		}
		if err != nil {
			// The id as spans record it: a caller's own id only as its hash,
			// as this error reaches logs, span statuses and HTTP answers.
			id := redact.Request(req.RequestID)
			err = fmt.Errorf("publish request (%s=%s): %w", id.Key, id.Value.String(), err)
		}
		done(rcpt, err)
	})
}

// CloseTimeout bounds how long Close waits for the requests not yet
// acknowledged: a broker gone for good would otherwise hold every process
// stopping (a gateway, a load, a produce) forever.
const CloseTimeout = 10 * time.Second

// Close flushes the requests not yet acknowledged, for at most CloseTimeout
// or until ctx ends, and closes the Kafka client: the Publisher owns the
// client it was made with. Requests still unacknowledged then fail, and
// Close says so.
func (p *Publisher) Close(ctx context.Context) error {
	fctx, cancel := context.WithTimeout(ctx, CloseTimeout)
	defer cancel()
	err := p.client.Flush(fctx)
	p.client.Close()
	if err != nil {
		return fmt.Errorf("requests published but not acknowledged (is the broker gone?): %w", err)
	}
	return nil
}

// newCorrelation returns a fresh messages.HeaderCorrelation value: 128
// random bits, which no caller can choose or guess.
func newCorrelation() string { return rand.Text() }
