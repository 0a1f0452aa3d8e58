// SPDX-License-Identifier: Apache-2.0

package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/redact"
	"github.com/kretrieve/kretrieve/results"
)

// ScopeName is the instrumentation scope of the root request spans.
const ScopeName = "github.com/kretrieve/kretrieve/producer"

// ErrTimeout is returned by Call.Wait when no outcome arrived in time.
var ErrTimeout = errors.New("timed out waiting for the result")

// ErrNotAcknowledged is returned by Call.Wait when the broker had not
// acknowledged the request by the deadline: it may still be published, or
// not. It is an ErrTimeout (errors.Is).
var ErrNotAcknowledged = fmt.Errorf("not acknowledged by Kafka in time, may still be published: %w", ErrTimeout)

// ErrNotPublished wraps the error of a request that Kafka did not take:
// the client failed it before any broker acknowledged it (franz-go fails a
// record only when it knows the record was not written), so it is safe to
// send again. Call.Wait and Call.Acked return it.
var ErrNotPublished = errors.New("request not published")

// Client publishes requests, each under its own root span, and waits for
// their outcomes: it composes a Publisher, which sends the requests, and a
// results.Collector, which hands it their outcomes. It owns both: Close
// stops both.
type Client struct {
	// Collector delivers the outcomes that calls wait for; nil when the
	// Client was made without one (calls cannot wait then).
	Collector *results.Collector

	pub    *Publisher
	tracer trace.Tracer
	cancel context.CancelFunc
	done   chan struct{}
}

// NewClient returns a Client publishing through pub. col may be nil when
// outcomes are not awaited; otherwise the Client runs it (results.Collector.Run)
// until Close, with ctx's values but not its cancellation. Its option is
// WithTracerProvider.
func NewClient(ctx context.Context, pub *Publisher, col *results.Collector, opts ...Option) *Client {
	cfg := newOptions(opts)
	c := &Client{Collector: col, pub: pub, tracer: cfg.tracerProvider.Tracer(ScopeName), cancel: func() {}, done: make(chan struct{})}
	if col == nil {
		close(c.done)
		return c
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	go func() {
		defer close(c.done)
		_ = col.Run(runCtx)
	}()
	return c
}

// Close flushes the requests not yet acknowledged, closes the Publisher and
// stops the Collector.
func (c *Client) Close(ctx context.Context) error {
	err := c.pub.Close(ctx)
	c.cancel()
	<-c.done
	return err
}

// Call is a request in flight.
type Call struct {
	Request messages.Request
	// TraceID is the request's trace id in hex, "" when tracing is off.
	TraceID string

	span    trace.Span
	acked   chan error
	outcome <-chan results.Outcome
	col     *results.Collector
	corr    string // the messages.HeaderCorrelation value of the request
	receipt Receipt
	ended   sync.Once
	ownSpan bool // whether the root span is ours to end
	// start and end bound the call: the root span's own timestamps when it
	// is ours; end is set once the outcome is recorded.
	start, end time.Time
}

// Duration is how long the call took from Start until its outcome was
// recorded (by Wait), exactly the duration of its root span when Start
// started one; zero before then. Safe to call after Wait returned.
func (call *Call) Duration() time.Duration {
	if call.end.IsZero() {
		return 0
	}
	return call.end.Sub(call.start)
}

// Start publishes req (with defaults applied). An invalid req is refused
// with its *messages.ValidationError before anything else happens: the
// Publisher's encoding is where a request is validated. When ctx carries a local span
// (an HTTP server span) the request is published under it and the span is
// annotated; otherwise a "request" span is started as the root of a new trace
// (or as the child of a remote parent in ctx) and ends with the outcome. With
// wait, the outcome is awaited with Call.Wait.
//
// The request carries a fresh random messages.HeaderCorrelation value, and
// Wait accepts only an outcome that carries it back. When ctx has a
// deadline, the request carries it as messages.HeaderDeadline: give ctx
// the caller's deadline (as the gateway does with its timeout), and no
// stage works on the request once its caller has stopped waiting. A request id that a
// call of c is waiting for, or whose outcome was delivered less than 10
// minutes ago, is refused with results.ErrRequestIDInUse (with wait or without,
// when c has a Collector), before anything is published.
func (c *Client) Start(ctx context.Context, req messages.Request, wait bool) (*Call, error) {
	req = req.WithDefaults()
	value, err := encode(req)
	if err != nil {
		return nil, err
	}
	return c.start(ctx, req, value, wait, nil)
}

// StartJSON is Start for a request in its JSON form, as the gateway
// receives it: body is decoded and validated once, by
// messages.CanonicalRequest, and published as it was checked. A body that
// breaks the request contract is refused with its *messages.DecodeError or
// *messages.ValidationError before anything else happens.
func (c *Client) StartJSON(ctx context.Context, body []byte, wait bool) (*Call, error) {
	req, value, err := messages.CanonicalRequest(body)
	if err != nil {
		return nil, err
	}
	return c.start(ctx, req, value, wait, nil)
}

// StartJSONNotify is StartJSON for a call that nobody waits on, whose
// outcome is still wanted: when the Client's Collector receives it, it is
// handed to notify (see results.Collector.ClaimFunc: on the collector's
// goroutine, so notify must return quickly), and Call.Forget withdraws the
// claim. As for StartJSON without wait, Acked ends the root span and the
// record carries ctx's deadline only when ctx has one; the request id is
// claimed (results.ErrRequestIDInUse) as for a call that waits.
func (c *Client) StartJSONNotify(ctx context.Context, body []byte, notify func(results.Outcome)) (*Call, error) {
	if notify == nil {
		return nil, errors.New("start: notify is nil")
	}
	req, value, err := messages.CanonicalRequest(body)
	if err != nil {
		return nil, err
	}
	return c.start(ctx, req, value, false, notify)
}

// Forget withdraws the claim of a call started with StartJSONNotify (or
// waited for): an outcome that arrives later is dropped and counted late.
func (call *Call) Forget() {
	if call.col != nil {
		call.col.ForgetClaim(call.Request.RequestID, call.corr)
	}
}

// start publishes req, whose valid encoding is value: Start's work once
// the request is checked.
// With notify, its outcome is handed to notify (StartJSONNotify).
func (c *Client) start(ctx context.Context, req messages.Request, value []byte, wait bool, notify func(results.Outcome)) (*Call, error) {
	if (wait || notify != nil) && c.Collector == nil {
		return nil, errors.New("start: no collector to wait with")
	}
	call := &Call{Request: req, acked: make(chan error, 1), col: c.Collector, corr: newCorrelation()}
	switch {
	case notify != nil:
		if err := c.Collector.ClaimFunc(req.RequestID, call.corr, notify); err != nil {
			return nil, err
		}
	case wait:
		ch, err := c.Collector.Claim(req.RequestID, call.corr)
		if err != nil {
			return nil, err
		}
		call.outcome = ch
	case c.Collector != nil:
		if err := c.Collector.CheckUnused(req.RequestID); err != nil {
			return nil, err
		}
	}
	call.start = time.Now()
	reqAttrs := append([]attribute.KeyValue{redact.Request(req.RequestID), otelnames.RequestTopK.Int(req.TopK)}, redact.Query(req.Query)...)
	if parent := trace.SpanFromContext(ctx); parent.SpanContext().IsValid() && !parent.SpanContext().IsRemote() {
		// A local span (an HTTP server span) already stands for the
		// request: annotate it instead of nesting another root under it.
		call.span = parent
		parent.SetAttributes(reqAttrs...)
	} else {
		ctx, call.span = c.tracer.Start(ctx, otelnames.SpanRequest, trace.WithTimestamp(call.start), trace.WithAttributes(reqAttrs...))
		call.ownSpan = true
	}
	span := call.span
	if sc := span.SpanContext(); sc.IsValid() {
		call.TraceID = sc.TraceID().String()
	}
	c.pub.produce(ctx, req, value, call.corr, func(r Receipt, err error) {
		call.receipt = r
		call.acked <- err
	})
	return call, nil
}

// Acked waits for the broker's acknowledgement. Without wait, it also ends
// the root span.
func (call *Call) Acked(ctx context.Context) (Receipt, error) {
	select {
	case err := <-call.acked:
		call.acked <- err // later callers see it too
		if err != nil {
			err = fmt.Errorf("%w: %w", ErrNotPublished, err)
			call.finish(err, "failed")
		} else if call.outcome == nil {
			call.finish(nil, "sent")
		}
		return call.receipt, err
	case <-ctx.Done():
		return Receipt{}, ctx.Err()
	}
}

// Wait waits for the request's outcome at most timeout, and at most until
// ctx's deadline (both give ErrTimeout), and ends the root span. A request
// the broker had not acknowledged by then gives ErrNotAcknowledged (an
// ErrTimeout), one the client failed to publish an ErrNotPublished.
func (call *Call) Wait(ctx context.Context, timeout time.Duration) (results.Outcome, error) {
	if call.outcome == nil {
		return results.Outcome{}, errors.New("wait: call was started without wait")
	}
	if _, err := call.Acked(ctx); err != nil {
		call.col.ForgetClaim(call.Request.RequestID, call.corr)
		if ctx.Err() != nil && !errors.Is(err, ErrNotPublished) {
			if err := call.stopped(ctx); !errors.Is(err, ErrTimeout) {
				return results.Outcome{}, err
			}
			return results.Outcome{}, ErrNotAcknowledged
		}
		return results.Outcome{}, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case out := <-call.outcome:
		return call.completed(out), nil
	case <-t.C:
		if out, ok := call.forget(); ok {
			return call.completed(out), nil
		}
		call.finish(ErrTimeout, "timeout")
		return results.Outcome{}, ErrTimeout
	case <-ctx.Done():
		if out, ok := call.forget(); ok {
			return call.completed(out), nil
		}
		return results.Outcome{}, call.stopped(ctx)
	}
}

// forget withdraws the call's claim on its outcome, and returns the
// outcome when it was delivered all the same: the collector hands an
// outcome over under its lock, so one delivered as the wait ended is in
// call.outcome once ForgetClaim returns (and one arriving later is
// counted late). Without this an outcome delivered at the deadline was
// neither returned nor counted: its caller was told 504 while the result
// had arrived.
func (call *Call) forget() (results.Outcome, bool) {
	call.col.ForgetClaim(call.Request.RequestID, call.corr)
	select {
	case out := <-call.outcome:
		return out, true
	default:
		return results.Outcome{}, false
	}
}

// completed ends the call with its outcome.
func (call *Call) completed(out results.Outcome) results.Outcome {
	if out.Failed {
		call.finish(fmt.Errorf("dead-lettered on %s: %s", out.Topic, out.Reason), "failed")
	} else {
		call.finish(nil, "completed")
	}
	return out
}

// stopped ends the call whose ctx is done: past ctx's deadline it timed out
// (ErrTimeout, as when timeout passes), else it was canceled (ctx.Err()).
func (call *Call) stopped(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		call.finish(ErrTimeout, "timeout")
		return ErrTimeout
	}
	call.finish(ctx.Err(), "canceled")
	return ctx.Err()
}

// finish records the first outcome on the root span and ends it if it is ours.
func (call *Call) finish(err error, outcome string) {
	call.ended.Do(func() {
		// From start by the monotonic clock, as the SDK ends spans: the
		// wall-clock and monotonic durations then agree to the nanosecond.
		call.end = call.start.Add(time.Since(call.start))
		call.span.SetAttributes(otelnames.RequestOutcome.String(outcome))
		if err != nil {
			call.span.RecordError(err)
			call.span.SetStatus(codes.Error, err.Error())
		}
		if call.ownSpan {
			call.span.End(trace.WithTimestamp(call.end))
		}
	})
}
