// SPDX-License-Identifier: Apache-2.0

package dlq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// extent is the part of one partition to read: offsets [from, end).
type extent struct {
	topic     string
	partition int32
	from, end int64
}

// listExtents returns, for every partition of topics in (topic, partition)
// order, the extent from its log start offset to its end offset (high
// watermark) as of now. A topic that does not exist is an error.
func listExtents(ctx context.Context, adm *kadm.Client, topics []string) ([]extent, error) {
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err == nil {
		err = listedError(starts)
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err == nil {
		err = listedError(ends)
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	var out []extent
	ends.Each(func(e kadm.ListedOffset) {
		x := extent{topic: e.Topic, partition: e.Partition, end: e.Offset}
		if s, ok := starts.Lookup(e.Topic, e.Partition); ok {
			x.from = s.Offset
		}
		out = append(out, x)
	})
	slices.SortFunc(out, func(a, b extent) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	return out, nil
}

// listedError returns the first partition error of a listing, naming a
// topic that does not exist.
func listedError(l kadm.ListedOffsets) error {
	var err error
	l.Each(func(o kadm.ListedOffset) {
		if o.Err == nil || err != nil {
			return
		}
		if errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
			err = fmt.Errorf("topic %s does not exist: %w", o.Topic, o.Err)
		} else {
			err = fmt.Errorf("topic %s partition %d: %w", o.Topic, o.Partition, o.Err)
		}
	})
	return err
}

// partitionRecords are the records of one partition from one poll, in
// offset order.
type partitionRecords struct {
	topic     string
	partition int32
	records   []*kgo.Record
}

type topicPartition struct {
	topic     string
	partition int32
}

// reader reads extents with a group-less client and stops each partition at
// the end of its extent: it never waits for records produced after the
// extents were listed.
type reader struct {
	client *kgo.Client
	ends   map[topicPartition]int64 // partitions still being read
}

// newReader returns a reader of the non-empty extents. clientOpts are the
// connection options; extra are added after them (hooks, for instance).
func newReader(clientOpts []kgo.Opt, extents []extent, extra ...kgo.Opt) (*reader, error) {
	r := &reader{ends: make(map[topicPartition]int64)}
	start := make(map[string]map[int32]kgo.Offset)
	for _, x := range extents {
		if x.from >= x.end {
			continue
		}
		r.ends[topicPartition{x.topic, x.partition}] = x.end
		if start[x.topic] == nil {
			start[x.topic] = make(map[int32]kgo.Offset)
		}
		start[x.topic][x.partition] = kgo.NewOffset().At(x.from)
	}
	opts := slices.Concat(clientOpts, extra, []kgo.Opt{
		kgo.ConsumePartitions(start),
		// Transaction markers take offsets too: seeing them is how a
		// partition whose last offset is a marker is known to be done.
		kgo.KeepControlRecords(),
	})
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	r.client = client
	return r, nil
}

// done reports whether every partition reached its end or was stopped.
func (r *reader) done() bool { return len(r.ends) == 0 }

// stop stops reading a partition.
func (r *reader) stop(topic string, partition int32) {
	if _, ok := r.ends[topicPartition{topic, partition}]; !ok {
		return
	}
	delete(r.ends, topicPartition{topic, partition})
	r.client.RemoveConsumePartitions(map[string][]int32{topic: {partition}})
}

// poll returns the next records below their partition's end, in (topic,
// partition) order, control records included. A fetch error ends reading.
func (r *reader) poll(ctx context.Context) ([]partitionRecords, error) {
	fetches := r.client.PollFetches(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var errs []error
	fetches.EachError(func(topic string, partition int32, err error) {
		if _, reading := r.ends[topicPartition{topic, partition}]; reading || partition < 0 {
			errs = append(errs, fmt.Errorf("fetch %s partition %d: %w", topic, partition, err))
		}
	})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []partitionRecords
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		tp := topicPartition{p.Topic, p.Partition}
		end, ok := r.ends[tp]
		if !ok || len(p.Records) == 0 {
			return
		}
		recs := p.Records
		if i := slices.IndexFunc(recs, func(rec *kgo.Record) bool { return rec.Offset >= end }); i >= 0 {
			recs = recs[:i]
		}
		if last := p.Records[len(p.Records)-1]; last.Offset >= end-1 {
			r.stop(p.Topic, p.Partition)
		}
		if len(recs) > 0 {
			out = append(out, partitionRecords{topic: p.Topic, partition: p.Partition, records: recs})
		}
	})
	slices.SortFunc(out, func(a, b partitionRecords) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	return out, nil
}

func (r *reader) close() { r.client.Close() }
