// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kgo"
)

// errorTypeShutdown is the error.type of a failed record that was not
// dead-lettered (a stop cancelled its handler): it is left for redelivery.
const errorTypeShutdown = "shutdown"

// processRecord runs q's record through the chain inside its process span
// (unless it is taken past its deadline: see expire)
// (as Trace does), settles the chain's outcome, then ends the span and
// counts the record done, so the outcome's send spans are children of the
// process span within it. A record whose outcome is an error that is not a
// dead letter is counted failed: it is left uncommitted, for redelivery.
func (w *Worker) processRecord(ctx context.Context, p *partition, q queued) {
	pd := p.begin(q.rec)
	msg := &Message{Record: q.rec, HighWatermark: q.highWatermark, Attempt: 1}
	pctx, span := startProcess(ctx, w.tracer, msg)
	msg.Deadline = readDeadline(q.rec, msg.QueueWait.End)
	if !msg.Deadline.IsZero() && msg.QueueWait.End.After(msg.Deadline) {
		// Taken past its deadline: the caller was already told. The
		// record is committed with nothing produced.
		w.expire(pctx, msg, span)
		endProcess(pctx, w.tracer, msg, span, nil, "")
		w.processed.Add(1)
		p.ack(pd, false)
		return
	}
	outs, err := w.handler(pctx, msg)
	failed, errType := w.settle(pctx, msg, pd, outs, err)
	endProcess(pctx, w.tracer, msg, span, err, errType)
	if failed {
		p.ack(pd, true)
		return
	}
	w.processed.Add(1)
	p.ack(pd, false)
}

// settle publishes the chain's outcome for msg: its outputs when it
// succeeded, its dead letter when it returned a *DeadLetterError. It
// reports whether the record failed without either (a stop cancelled it),
// and the process span's error.type: "" on success, "shutdown" for such a
// failure, else "permanent" or "transient".
func (w *Worker) settle(ctx context.Context, msg *Message, pd *pending, outs []*kgo.Record, err error) (failed bool, errType string) {
	if err == nil {
		w.publishOutputs(ctx, msg.Record, msg.Deadline, outs, pd)
		return false, ""
	}
	var dle *DeadLetterError
	if !errors.As(err, &dle) || dle.Record == nil {
		return true, errorTypeShutdown
	}
	w.publishDeadLetter(ctx, msg.Record, dle, pd)
	return false, errorKind(err)
}
