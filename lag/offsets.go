// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// Reader is a reader of one topic that keeps its own offsets instead of a
// consumer group's: a worker's index following the documents topic
// (package docfeed) reads every partition with no group, and records in
// its index the next offset of each partition it has applied.
type Reader struct {
	// Name names the reader: it is the Group of its PartitionLags and the
	// kretrieve.index.name of its gauges.
	Name string
	// Topic is the topic read.
	Topic string
	// Offsets returns, per partition, the next offset the reader will
	// read (every record before it is read). A partition it has no entry
	// for is read from its log start.
	Offsets func() map[int32]int64
}

// Validate reports a Reader that cannot be measured.
func (r Reader) Validate() error {
	var errs []error
	if r.Name == "" {
		errs = append(errs, errors.New("lag reader: name is empty"))
	}
	if r.Topic == "" {
		errs = append(errs, errors.New("lag reader: topic is empty"))
	}
	if r.Offsets == nil {
		errs = append(errs, errors.New("lag reader: no offsets function"))
	}
	return errors.Join(errs...)
}

// MeasureReader returns the lag of r on every partition of its topic,
// sorted by partition, as Measure does for a group: Records is the end
// offset minus the reader's next offset (the log start when it has none,
// or when its offset is below the log start: the records it missed are
// gone), and Seconds the age of the record at that offset. Committed is
// the reader's next offset, -1 when it has none. A topic that does not
// exist yet is no error: it has no partitions, and so no entries.
func MeasureReader(ctx context.Context, baseOpts []kgo.Opt, r Reader) ([]PartitionLag, error) {
	return MeasureReaders(ctx, baseOpts, r)
}

// MeasureReaders measures the lag of every reader as MeasureReader does,
// listing each topic's offsets once and reading the oldest records of all
// of them with one consumer per round, and returns their entries in the
// order of readers, each reader's sorted by partition. Many workers'
// indexes following one topic are measured so at the cost of one.
func MeasureReaders(ctx context.Context, baseOpts []kgo.Opt, readers ...Reader) ([]PartitionLag, error) {
	var topics []string
	for _, r := range readers {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		if !slices.Contains(topics, r.Topic) {
			topics = append(topics, r.Topic)
		}
	}
	if len(readers) == 0 {
		return nil, nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, measureTimeout)
	defer cancel()
	client, err := kgo.NewClient(kafkaclient.ReadOnly(baseOpts)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer client.Close()
	adm := kadm.NewClient(client)
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	at := time.Now()
	var lags []PartitionLag
	for _, r := range readers {
		lags = append(lags, readerLags(r, r.Offsets(), starts, ends)...)
	}
	readOldest(ctx, baseOpts, lags, at)
	if err := parent.Err(); err != nil {
		return nil, err
	}
	return lags, nil
}

// readerLags computes the lag in records of a reader at next from the
// listed start and end offsets of its topic.
func readerLags(r Reader, next map[int32]int64, starts, ends kadm.ListedOffsets) []PartitionLag {
	var out []PartitionLag
	ends.Each(func(e kadm.ListedOffset) {
		if e.Topic != r.Topic || errors.Is(e.Err, kerr.UnknownTopicOrPartition) {
			return
		}
		l := PartitionLag{Group: r.Name, Topic: e.Topic, Partition: e.Partition, Committed: -1, End: -1, Records: -1, Seconds: -1,
			Members: -1, Health: unknownHealth}
		if o, ok := next[e.Partition]; ok {
			l.Committed = o
		}
		s, ok := starts.Lookup(e.Topic, e.Partition)
		switch {
		case e.Err != nil:
			l.Err = fmt.Errorf("end offset: %w", e.Err)
		case !ok || s.Err != nil:
			l.Err = fmt.Errorf("start offset: %w", cmp.Or(s.Err, errors.New("not listed")))
		default:
			l.End = e.Offset
			from := max(l.Committed, s.Offset)
			l.Records, l.Seconds = max(e.Offset-from, 0), 0
		}
		out = append(out, l)
	})
	slices.SortFunc(out, func(a, b PartitionLag) int { return cmp.Compare(a.Partition, b.Partition) })
	return out
}

// Sum sums the lags of partitions, as one lag of a group or reader on a
// topic: records add up, and the age of the oldest record is the largest
// of the partitions'. Each is -1 (unknown) when one partition's is, or
// when there are no partitions; errs joins the partitions' errors.
func Sum(parts []PartitionLag) (records int64, seconds float64, errs error) {
	if len(parts) == 0 {
		return -1, -1, nil
	}
	var all []error
	for _, p := range parts {
		if p.Err != nil {
			all = append(all, fmt.Errorf("partition %d: %w", p.Partition, p.Err))
		}
		switch {
		case records < 0 || p.Records < 0:
			records, seconds = -1, -1
			continue
		default:
			records += p.Records
		}
		if seconds < 0 || p.Seconds < 0 {
			seconds = -1
			continue
		}
		seconds = max(seconds, p.Seconds)
	}
	return records, seconds, errors.Join(all...)
}
