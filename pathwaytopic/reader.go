// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MaxInstances bounds the instances a Reader keeps; records of more are
// skipped with ReasonInstances.
const MaxInstances = 10000

// ErrNoTopic is matched by CatchUp's error when the aggregate topic does
// not exist: no process has published yet.
var ErrNoTopic = errors.New("the pathway aggregate topic does not exist: no process has published pathways yet")

// Reader reads the aggregate topic and keeps the newest window of each
// instance: the one read last, as compaction keeps it, never one chosen by
// the times it claims. It is not safe for concurrent use.
//
// A window's age is judged on the reader's clock alone, so that a writer
// whose clock is off is neither hidden nor kept alive: the Reader sets
// each window's Seen to the record's timestamp, bounded by the moment it
// received the record and, from the second CatchUp on, by the moment the
// previous CatchUp listed the topic's end offsets (a record read now was
// not there then). A Reader that keeps catching up (the console, the
// pathways command) so knows within one read when every window was
// published, whatever the writers' clocks. The records of a Reader's first
// CatchUp, published before it started, can only be dated by their
// timestamps: the broker's own with message.timestamp.type=LogAppendTime
// (TopicConfigs), otherwise the writer's.
//
// Records are hostile (see Decode): a window ending more than MaxAhead
// after its receipt is refused, and so is one that would take the Reader
// over MaxReaderSeries series in all.
type Reader struct {
	client *kgo.Client
	cfg    config

	windows map[string]Window
	skipped map[string]uint64
	// series is the number of series of windows.
	series int
	// next is the offset of the next record to read, per partition.
	next map[int32]int64
	// listed is when the last successful CatchUp listed the end offsets:
	// every record read since was published after it. Zero before.
	listed time.Time
}

// NewReader returns a Reader of the aggregate topic (WithTopic) from its
// start, with a client built from opts (seed brokers, TLS, SASL; no
// consuming options), with WithLogger and WithStaleAfter. Close it.
func NewReader(opts []kgo.Opt, ropts ...Option) (*Reader, error) {
	cfg := newConfig(ropts)
	client, err := kgo.NewClient(append(slices.Clone(opts),
		kgo.ConsumeTopics(cfg.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxPartitionBytes(4*MaxRecordBytes),
	)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return &Reader{client: client, cfg: cfg, windows: map[string]Window{}, skipped: map[string]uint64{}, next: map[int32]int64{}}, nil
}

// Close closes the Reader's client.
func (r *Reader) Close() { r.client.Close() }

// Topic returns the topic read.
func (r *Reader) Topic() string { return r.cfg.topic }

// CatchUp reads every record published before it was called, and returns
// once it has, or with ctx's error. Its error matches ErrNoTopic when the
// topic does not exist.
func (r *Reader) CatchUp(ctx context.Context) error {
	listing := r.cfg.now()
	adm := kadm.NewClient(r.client)
	ends, err := adm.ListEndOffsets(ctx, r.cfg.topic)
	if err == nil {
		err = listError(ends)
	}
	if err != nil {
		return err
	}
	starts, err := adm.ListStartOffsets(ctx, r.cfg.topic)
	if err == nil {
		err = listError(starts)
	}
	if err != nil {
		return err
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		from := r.next[o.Partition]
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok {
			from = max(from, s.Offset)
		}
		if o.Offset > from {
			want[o.Partition] = o.Offset
		}
	})
	for len(want) > 0 {
		fs := r.client.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var errs []error
		fs.EachError(func(t string, p int32, err error) {
			errs = append(errs, fmt.Errorf("read %s partition %d: %w", t, p, err))
		})
		if err := errors.Join(errs...); err != nil {
			return err
		}
		fs.EachRecord(func(rec *kgo.Record) {
			r.add(ctx, rec, r.seen(rec))
			r.next[rec.Partition] = rec.Offset + 1
			if end, ok := want[rec.Partition]; ok && rec.Offset+1 >= end {
				delete(want, rec.Partition)
			}
		})
	}
	r.listed = listing
	r.prune()
	return nil
}

// seen returns when rec was published as far as the reader can tell, on
// its clock (see Reader): its timestamp, no later than now and no earlier
// than the previous listing of the end offsets.
func (r *Reader) seen(rec *kgo.Record) time.Time {
	now := r.cfg.now()
	t := rec.Timestamp
	if t.IsZero() || t.After(now) {
		t = now
	}
	if t.Before(r.listed) {
		t = r.listed
	}
	return t
}

// listError returns the error of a listing of one topic's offsets,
// ErrNoTopic when it does not exist.
func listError(l kadm.ListedOffsets) error {
	var errs []error
	l.Each(func(o kadm.ListedOffset) {
		switch {
		case o.Err == nil:
		case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
			errs = append(errs, fmt.Errorf("%w (%s)", ErrNoTopic, o.Topic))
		default:
			errs = append(errs, fmt.Errorf("list offsets of %s partition %d: %w", o.Topic, o.Partition, o.Err))
		}
	})
	if len(errs) == 0 && len(l) == 0 {
		return ErrNoTopic
	}
	if len(errs) > 0 {
		return errs[0] // the same error for every partition, as a rule
	}
	return nil
}

// add keeps the record's window, published at seen, when it is valid: it
// replaces the window of its instance read before, whatever times either
// claims. It counts and logs the records it refuses.
func (r *Reader) add(ctx context.Context, rec *kgo.Record, seen time.Time) {
	w, err := Decode(rec.Key, rec.Value)
	var ie *InvalidError
	switch {
	case errors.As(err, &ie) && ie.Reason == ReasonTombstone:
		r.drop(string(rec.Key))
		return
	case err != nil:
		reason := ReasonMalformed
		if ie != nil {
			reason = ie.Reason
		}
		r.skip(ctx, rec, reason, err)
		return
	}
	old, ok := r.windows[w.Instance]
	switch {
	case w.End.Sub(r.cfg.now()) > MaxAhead:
		r.skip(ctx, rec, ReasonFuture, fmt.Errorf("ends at %s, over %s after it was read", w.End, MaxAhead))
		return
	case !ok && len(r.windows) >= MaxInstances:
		r.skip(ctx, rec, ReasonInstances, fmt.Errorf("more than %d instances", MaxInstances))
		return
	case r.series-len(old.Series)+len(w.Series) > r.cfg.maxSeries:
		r.skip(ctx, rec, ReasonBudget, fmt.Errorf("%d series, %d held already, at most %d", len(w.Series), r.series, r.cfg.maxSeries))
		return
	}
	w.Seen = seen
	r.series += len(w.Series) - len(old.Series)
	r.windows[w.Instance] = w
}

// drop forgets the window of an instance.
func (r *Reader) drop(instance string) {
	r.series -= len(r.windows[instance].Series)
	delete(r.windows, instance)
}

// skip counts a refused record; the first of each reason is logged at
// warn, the others at debug.
func (r *Reader) skip(ctx context.Context, rec *kgo.Record, reason string, err error) {
	r.skipped[reason]++
	log := r.cfg.logger.DebugContext
	if r.skipped[reason] == 1 {
		log = r.cfg.logger.WarnContext
	}
	log(ctx, "pathway aggregate skipped", "topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "reason", reason, "err", err)
}

// prune forgets the windows published more than Retention ago: the topic
// has dropped them too.
func (r *Reader) prune() {
	now := r.cfg.now()
	for id, w := range r.windows {
		if now.Sub(w.Seen) > Retention {
			r.drop(id)
		}
	}
}

// View merges the newest window of each instance that is not stale now.
func (r *Reader) View() View {
	ws := slices.Collect(maps.Values(r.windows))
	v := Merge(ws, r.cfg.now(), r.cfg.staleAfter)
	v.Skipped = maps.Clone(r.skipped)
	return v
}
