package consumers

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// DeadLetterPublisher sends dl, the dead letter of msg, which failed with
// err; fallback is the same dead letter without the original value and
// headers, to send instead when the broker refuses dl as too large.
type DeadLetterPublisher func(ctx context.Context, msg *Message, err error, dl, fallback *kgo.Record)

// DeadLetter returns middleware that sends a record the next handler failed
// on to its dead-letter topic, when filter(ctx, err) says so (a nil filter:
// on every error). The dead letter is deadletters.Build's, cut to maxBytes
// (0: no limit), with the error's text, "permanent" or "transient" as
// IsPermanent says, msg.Attempt and group; the fallback is
// deadletters.BuildMinimal's. Both records carry ctx's values (so their send
// spans are children of the process span), a link to msg.Remote (the
// producer's span of the record that failed) and not ctx's cancellation:
// they outlive a shutdown. publish sends them.
//
// It then sets msg.DeadLettered and returns the error with no outputs, so
// that Trace records the failure; an error the filter refuses is returned
// as it is, and the record is not dead-lettered.
func DeadLetter(publish DeadLetterPublisher, group string, maxBytes int, filter func(ctx context.Context, err error) bool) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, msg *Message) ([]*kgo.Record, error) {
			outs, err := next(ctx, msg)
			if err == nil || filter != nil && !filter(ctx, err) {
				return outs, err
			}
			rec := msg.Record
			failure := deadletters.Failure{Reason: err.Error(), ErrorType: errorKind(err), Attempts: msg.Attempt, ConsumerGroup: group}
			dl := deadletters.Build(rec, failure, maxBytes)
			fallback := deadletters.BuildMinimal(rec, failure)
			dl.Context = ctx
			if msg.Remote.IsValid() {
				dl.Context = kafkatrace.ContextWithLinks(ctx, trace.Link{SpanContext: msg.Remote})
			}
			dl.Context = context.WithoutCancel(dl.Context)
			fallback.Context = dl.Context
			publish(ctx, msg, err, dl, fallback)
			msg.DeadLettered = true
			return nil, err
		}
	}
}
