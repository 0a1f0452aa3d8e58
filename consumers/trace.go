// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// Trace returns middleware that runs the next handler inside the record's
// process span. It starts the "wait <topic>" and "process <topic>" spans
// with tracer.StartProcessRemote (msg.HighWatermark gives the offset lag),
// sets msg.QueueWait and msg.Remote, hands the next handler the context
// carrying the process span (and the record's pathway), and once that
// handler returns ends the span with tracer.EndProcess, which records the
// process duration.
//
// A failed record's span records the error with the error.type that
// errorType gives (nil: IsPermanent's "permanent" or "transient"). Trace
// belongs outermost: every other middleware then happens inside the span.
// A Worker does Trace's work itself around its whole chain (see
// DefaultMiddleware), so that the publishing of the outcome happens inside
// the span too.
func Trace(tracer *kafkatrace.Tracer, errorType func(msg *Message, err error) string) Middleware {
	if errorType == nil {
		errorType = func(_ *Message, err error) string { return errorKind(err) }
	}
	return func(next Handler) Handler {
		return func(ctx context.Context, msg *Message) ([]*kgo.Record, error) {
			pctx, span := startProcess(ctx, tracer, msg)
			outs, err := next(pctx, msg)
			errType := ""
			if err != nil {
				errType = errorType(msg, err)
			}
			endProcess(pctx, tracer, msg, span, err, errType)
			return outs, err
		}
	}
}

// startProcess starts msg's wait and process spans, sets msg.QueueWait and
// msg.Remote, and returns the context carrying the process span.
func startProcess(ctx context.Context, tracer *kafkatrace.Tracer, msg *Message) (context.Context, trace.Span) {
	pctx, span, qw, remote := tracer.StartProcessRemote(ctx, msg.Record, msg.HighWatermark)
	msg.QueueWait, msg.Remote = qw, remote
	return pctx, span
}

// endProcess ends msg's process span, started by startProcess, recording
// err with errType, and records the process duration.
func endProcess(pctx context.Context, tracer *kafkatrace.Tracer, msg *Message, span trace.Span, err error, errType string) {
	tracer.EndProcess(pctx, msg.Record, msg.QueueWait.End, span, err, errType)
}
