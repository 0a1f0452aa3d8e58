package consumers

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

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
// belongs outermost: every other middleware, and the publishing of the
// outputs, then happen inside the span. The Worker installs it first.
func Trace(tracer *kafkatrace.Tracer, errorType func(msg *Message, err error) string) Middleware {
	if errorType == nil {
		errorType = func(_ *Message, err error) string { return errorKind(err) }
	}
	return func(next Handler) Handler {
		return func(ctx context.Context, msg *Message) ([]*kgo.Record, error) {
			rec := msg.Record
			pctx, span, qw, remote := tracer.StartProcessRemote(ctx, rec, msg.HighWatermark)
			msg.QueueWait, msg.Remote = qw, remote
			outs, err := next(pctx, msg)
			errType := ""
			if err != nil {
				errType = errorType(msg, err)
			}
			tracer.EndProcess(pctx, rec, qw.End, span, err, errType)
			return outs, err
		}
	}
}
