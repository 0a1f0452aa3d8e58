// SPDX-License-Identifier: Apache-2.0

package docfeed

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/search"
)

// Decode returns the change a documents record asks for: a tombstone
// deletes its key, a value upserts the document it holds, which must be
// valid (corpus.ParseDocument) and have the key (at most
// messages.MaxDocumentIDBytes) as its id. Anything else is an error: the
// record is dead-lettered. Workers apply records by this rule, and
// `kretrieve documents verify` reads the topic by it.
func Decode(r *kgo.Record) (search.Change, error) {
	id := string(r.Key)
	switch {
	case len(r.Key) == 0:
		return search.Change{}, errors.New("document record without a key: the key is the document id")
	case len(r.Key) > messages.MaxDocumentIDBytes:
		return search.Change{}, fmt.Errorf("key of %d bytes: a document id is at most %d", len(r.Key), messages.MaxDocumentIDBytes)
	case r.Value == nil:
		return search.Change{ID: id}, nil
	}
	doc, err := corpus.ParseDocument(r.Value)
	if err != nil {
		return search.Change{}, err
	}
	if doc.ID != id {
		return search.Change{}, errors.New("the record key is not the document's id")
	}
	return search.Change{ID: id, Doc: &doc}, nil
}

// apply applies one batch of records: dead letters for the bad ones
// first (acknowledged, so a crash after the apply loses none), then the
// documents and the position they reach in one search.Index.Apply, then a
// checkpoint and (when sampled) a process span per record, now that the
// batch is searchable.
func (f *Follower) apply(ctx context.Context, recs []*kgo.Record) error {
	f.mu.Lock()
	next := maps.Clone(f.pos)
	target := f.target
	f.mu.Unlock()
	changes := make([]search.Change, 0, len(recs))
	var letters []*kgo.Record
	newest := f.live.Position().Newest
	for _, r := range recs {
		next[r.Partition] = r.Offset + 1
		newest = later(newest, r.Timestamp)
		c, err := Decode(r)
		if err == nil {
			changes = append(changes, c)
			continue
		}
		// A record older than the catch-up target was dead-lettered by
		// the workers that were live when it arrived.
		if r.Offset >= target[r.Partition] {
			letters = append(letters, f.deadLetter(r, err))
		}
		f.logger.DebugContext(ctx, "document record refused", "partition", r.Partition, "offset", r.Offset, "err", err)
	}
	if err := f.publishDeadLetters(ctx, letters); err != nil {
		return err
	}
	started := time.Now()
	res, err := f.live.index().Apply(ctx, changes, search.Position{Topic: f.cfg.Topic, Offsets: next, Newest: newest})
	if err != nil {
		return fmt.Errorf("apply documents: %w", err)
	}
	f.mu.Lock()
	f.pos = next
	f.mu.Unlock()
	f.applied.Add(int64(len(recs)))
	f.checkpoint(ctx, recs, started, res)
	f.checkReady()
	return nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// checkpoint takes each applied record's pathway checkpoint and, when
// sampled, its process span, with what the batch did as attributes.
func (f *Follower) checkpoint(ctx context.Context, recs []*kgo.Record, started time.Time, res search.Applied) {
	attrs := []attribute.KeyValue{
		otelnames.IndexBatchRecords.Int(len(recs)),
		otelnames.IndexBatchUpserted.Int(res.Upserted),
		otelnames.IndexBatchDeleted.Int(res.Deleted),
		otelnames.IndexBatchUnchanged.Int(res.Unchanged),
		otelnames.IndexApplyMS.Float64(float64(time.Since(started).Microseconds()) / 1000),
	}
	for _, r := range recs {
		pctx, span, _ := f.tracer.StartProcess(ctx, r, -1)
		if span.IsRecording() {
			span.SetAttributes(attrs...)
		}
		f.tracer.EndProcess(pctx, r, started, span, nil, "")
	}
}

// deadLetter returns the dead letter of r, refused for err.
func (f *Follower) deadLetter(r *kgo.Record, err error) *kgo.Record {
	dl := deadletters.Build(r, deadletters.Failure{Reason: err.Error(), ErrorType: deadletters.ErrorTypePermanent,
		Attempts: 1, ConsumerGroup: f.cfg.Name}, f.cfg.MaxDeadLetterBytes)
	return dl
}

// publishDeadLetters produces letters and waits for their acknowledgement.
func (f *Follower) publishDeadLetters(ctx context.Context, letters []*kgo.Record) error {
	if len(letters) == 0 {
		return nil
	}
	if err := f.admin.ProduceSync(ctx, letters...).FirstErr(); err != nil {
		return fmt.Errorf("dead-letter documents: %w", err)
	}
	f.deadLettered.Add(int64(len(letters)))
	f.logger.WarnContext(ctx, "documents dead-lettered", "records", len(letters), "dlq", messages.DLQTopic(f.cfg.Topic))
	return nil
}
