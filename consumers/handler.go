// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
)

// Message is one consumed record being processed: the record and what the
// runtime and the middleware learn about it (its place in the partition,
// its trace context, its attempt), for the middleware inside them and the
// handler, so the record's headers are read once. It carries nothing back:
// the chain's outcome is what it returns.
type Message struct {
	// Record is the consumed record. Handlers must not modify it.
	Record *kgo.Record
	// HighWatermark is the partition's high watermark from the fetch that
	// returned Record (-1 when unknown).
	HighWatermark int64
	// QueueWait is how long the record sat in Kafka before processing
	// started. Trace (or the Worker, doing Trace's work) sets it.
	QueueWait kafkatrace.QueueWait
	// Remote is the trace context found in the record's headers: the
	// producer's span, which the process span is a child of (or linked to,
	// at a trust boundary) and the record's dead letter links to. Set with
	// QueueWait; it is invalid when the record carries none.
	Remote trace.SpanContext
	// Attempt counts handler attempts, starting at 1. Retry counts them.
	Attempt int
	// Deadline is the caller's deadline the record carries
	// (messages.HeaderDeadline, by messages.ReadDeadline's rules), zero
	// when it carries none. The runtime does not run the handler for a
	// record taken past it; a handler may use the budget left
	// (Deadline minus now) to do less work, as enrichment does. It is
	// not a context deadline: work started is not cancelled.
	Deadline time.Time
}

// Handler processes one message and returns its outcome: the records to
// publish as its output, or an error. The runtime produces the outputs as
// children of the process span and commits the input offset only once all
// of them are acknowledged. A *DeadLetterError (what DeadLetter returns)
// is an outcome too: the runtime publishes its dead letter instead, and
// commits the input once that is acknowledged; the input of any other
// error is left uncommitted, for redelivery.
//
// An error marked with Permanent (or matching messages.ErrInvalid) sends the
// record to the dead-letter topic at once; other errors are retried by the
// Retry middleware and dead-lettered when retries are exhausted.
//
// The error's text is recorded on the process span, in the worker's log and
// in the dead-letter reason header: it must not contain user data (query
// text, document bodies, record keys). Wrap errors of calls given user data
// with RedactError.
type Handler func(ctx context.Context, msg *Message) ([]*kgo.Record, error)

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that retrying cannot fix.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked Permanent or is an invalid message.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p) || errors.Is(err, messages.ErrInvalid)
}

// errorKind returns deadletters.ErrorTypePermanent or
// deadletters.ErrorTypeTransient, for dead-letter headers.
func errorKind(err error) string {
	if IsPermanent(err) {
		return deadletters.ErrorTypePermanent
	}
	return deadletters.ErrorTypeTransient
}

// Recover turns a panicking handler into a permanent error, so a poison record
// is dead-lettered instead of crashing the worker.
//
// The error's text keeps the message of a runtime error (such as "index out
// of range [3] with length 3") but only the type of any other panic value:
// a value passed to panic may quote the record (panic(err) after a failed
// decode), and the text goes to spans, logs and the dead-letter reason. The
// Worker logs the panicking goroutine's stack when it publishes the dead
// letter.
func Recover() Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, msg *Message) (outs []*kgo.Record, err error) {
			defer func() {
				if r := recover(); r != nil {
					outs, err = nil, Permanent(&panicError{value: r, stack: debug.Stack()})
				}
			}()
			return next(ctx, msg)
		}
	}
}

// panicError is a recovered handler panic.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	if re, ok := e.value.(runtime.Error); ok {
		return "handler panic: " + re.Error()
	}
	return fmt.Sprintf("handler panic (%T value)", e.value)
}
