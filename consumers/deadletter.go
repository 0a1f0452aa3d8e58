// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkatrace"
)

// DeadLetterError is the outcome of a record that is to be dead-lettered:
// the error that caused it and the dead letter to publish. The chain returns
// it as its error; the runtime then publishes Record (or Fallback, when the
// broker refuses Record as too large) and commits the input once the dead
// letter is acknowledged. Its text, errors.Is and errors.As are Err's.
type DeadLetterError struct {
	// Err is the error the record failed with.
	Err error
	// Record is the dead letter: the original record and the
	// kretrieve.dlq.* headers, for the record's dead-letter topic.
	Record *kgo.Record
	// Fallback is the same dead letter without the original value and
	// headers, sent instead when the broker refuses Record as too large.
	Fallback *kgo.Record
	// Attempts is how many times the record was tried.
	Attempts int
}

// Error returns Err's text.
func (e *DeadLetterError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *DeadLetterError) Unwrap() error { return e.Err }

// DeadLetterConfig configures DeadLetter.
type DeadLetterConfig struct {
	// Group is the consumer group named in the dead letters.
	Group string
	// MaxBytes caps a dead letter's estimated size (see
	// deadletters.Build). Default: 0, no limit.
	MaxBytes int
	// Filter says whether the record that failed with err is
	// dead-lettered; an error it refuses is returned as it is. Default:
	// nil, every error is.
	Filter func(ctx context.Context, err error) bool
}

// DeadLetter returns middleware that turns the next handler's failure into
// a dead-letter outcome, when cfg.Filter says so: it returns a
// *DeadLetterError carrying the error and the dead letter. The dead letter
// is deadletters.Build's, cut to cfg.MaxBytes, with the error's text,
// "permanent" or "transient" as IsPermanent says, msg.Attempt and
// cfg.Group; the fallback is deadletters.BuildMinimal's. Both records
// carry ctx's values (so their send spans are children of the process
// span), a link to msg.Remote (the producer's span of the record that
// failed) and not ctx's cancellation: they outlive a shutdown.
//
// It publishes nothing: the runtime publishes the dead letter of the
// outcome the chain returns.
func DeadLetter(cfg DeadLetterConfig) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, msg *Message) ([]*kgo.Record, error) {
			outs, err := next(ctx, msg)
			if err == nil || cfg.Filter != nil && !cfg.Filter(ctx, err) {
				return outs, err
			}
			rec := msg.Record
			failure := deadletters.Failure{Reason: err.Error(), ErrorType: errorKind(err), Attempts: msg.Attempt, ConsumerGroup: cfg.Group}
			dl := deadletters.Build(rec, failure, cfg.MaxBytes)
			fallback := deadletters.BuildMinimal(rec, failure)
			dl.Context = ctx
			if msg.Remote.IsValid() {
				dl.Context = kafkatrace.ContextWithLinks(ctx, trace.Link{SpanContext: msg.Remote})
			}
			dl.Context = context.WithoutCancel(dl.Context)
			fallback.Context = dl.Context
			return nil, &DeadLetterError{Err: err, Record: dl, Fallback: fallback, Attempts: msg.Attempt}
		}
	}
}

// notStopped is the default chain's DeadLetter filter: when a stop ran out
// of time and cancelled the handlers, it leaves the record uncommitted for
// redelivery rather than dead-lettering work that was merely interrupted.
func notStopped(ctx context.Context, _ error) bool { return ctx.Err() == nil }
