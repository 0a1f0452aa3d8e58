// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// publishOutputs produces outs, the outputs of in, as children of the
// process span in ctx (unless they carry a context of their own), each
// with in's correlation id unless it sets its own, and with in's deadline
// (zero: none).
func (w *Worker) publishOutputs(ctx context.Context, in *kgo.Record, deadline time.Time, outs []*kgo.Record, pd *pending) {
	if len(outs) == 0 {
		return
	}
	// The outputs outlive a shutdown signal: they must still be
	// acknowledged before the input offset can be committed, so neither
	// the produce call nor the records (whose Context franz-go watches
	// while they are buffered) are cancelled with ctx. The contexts keep
	// their values: the span and the pathway.
	kept := context.WithoutCancel(ctx)
	corr := tracecontext.HeaderCarrier{Record: in}.Get(messages.HeaderCorrelation)
	var dl []byte // formatted once, shared by the outputs' headers (read-only)
	if !deadline.IsZero() {
		dl = []byte(messages.FormatDeadline(deadline))
	}
	for _, out := range outs {
		if out.Context == nil {
			out.Context = kept
		} else {
			out.Context = context.WithoutCancel(out.Context)
		}
		carryCorrelation(out, corr)
		carryDeadline(out, dl)
		w.produce(kept, in, out, nil, pd)
	}
}

// carryCorrelation gives out its input's messages.HeaderCorrelation value
// corr, unless out sets one itself or the input had none.
func carryCorrelation(out *kgo.Record, corr string) {
	if corr == "" {
		return
	}
	c := tracecontext.HeaderCarrier{Record: out}
	if c.Get(messages.HeaderCorrelation) == "" {
		c.Set(messages.HeaderCorrelation, corr)
	}
}

// publishDeadLetter logs why in is dead-lettered and produces dle's dead
// letter, or its fallback when the broker refuses it as too large.
func (w *Worker) publishDeadLetter(ctx context.Context, in *kgo.Record, dle *DeadLetterError, pd *pending) {
	attrs := []any{"partition", in.Partition, "offset", in.Offset, "error_type", errorKind(dle.Err), "attempts", dle.Attempts, "err", dle.Err}
	if pe := (*panicError)(nil); errors.As(dle.Err, &pe) {
		attrs = append(attrs, "stack", string(pe.stack))
	}
	w.logger.WarnContext(ctx, "dead-lettering record", attrs...)
	w.produce(context.WithoutCancel(ctx), in, dle.Record, dle.Fallback, pd)
	w.dead.Add(1)
}

// produce produces out, an output of in. If the broker (or the client's
// batch limit) refuses out as too large and fallback is not nil, fallback
// is produced instead. An output that is not acknowledged fails in, so it
// is not committed and is fetched again: nothing is dropped silently.
func (w *Worker) produce(ctx context.Context, in, out, fallback *kgo.Record, pd *pending) {
	p := pd.p
	p.add(pd)
	w.client.Produce(ctx, out, func(r *kgo.Record, perr error) {
		if perr == nil {
			p.outputAcked()
			p.ack(pd, false)
			return
		}
		if fallback != nil && tooLarge(perr) {
			w.logger.WarnContext(r.Context, "dead letter too large; sending it without the original value and headers",
				"output_topic", r.Topic, "partition", in.Partition, "offset", in.Offset, "err", perr)
			// Producing inside a promise may block on a full buffer, which
			// only this promise goroutine drains: produce from another one.
			go func() {
				w.produce(ctx, in, fallback, nil, pd)
				p.ack(pd, false)
			}()
			return
		}
		p.outputFailed(r.Context, r, in, perr)
		p.ack(pd, true)
	})
}

// tooLarge reports whether a produce error says the record is too large.
func tooLarge(err error) bool {
	return errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}
