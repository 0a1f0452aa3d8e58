// SPDX-License-Identifier: Apache-2.0

package dlq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
)

// List reads the dead-letter topics from their start offsets to their end
// offsets as of the call, with a direct (group-less) consumer that commits
// nothing, and returns the letters oldest first (by the dead letter's
// record timestamp, ties in (topic, partition, offset) order): at most
// limit of them, all when limit is 0. It does not wait for letters
// written after it was called. A topic that does not exist is an error.
//
// clientOpts are the connection options (see kafkaclient.Options); List
// creates its own clients from them and closes them before returning.
func List(ctx context.Context, clientOpts []kgo.Opt, topics []string, limit int) ([]deadletters.Letter, error) {
	// No partition contributes more than limit of the oldest letters (a
	// partition's timestamps grow with its offsets: a dead letter is
	// stamped when it is produced), so reading a partition stops there and
	// memory stays bounded by limit × partitions.
	var letters []deadletters.Letter
	err := Each(ctx, clientOpts, topics, limit, func(l deadletters.Letter) { letters = append(letters, l) })
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	slices.SortFunc(letters, func(a, b deadletters.Letter) int {
		return cmp.Or(a.Timestamp.Compare(b.Timestamp),
			cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	if limit > 0 && len(letters) > limit {
		letters = letters[:limit]
	}
	return letters, nil
}

// Each reads the dead-letter topics as List does and hands each letter to
// fn as it is read, in offset order within a partition (partitions
// interleave): at most perPartition letters of each partition, all when it
// is 0. The letter shares the record's key, value and headers, which Each
// does not keep: a caller that keeps only what it needs of each letter
// holds that, whatever the topics hold.
func Each(ctx context.Context, clientOpts []kgo.Opt, topics []string, perPartition int, fn func(deadletters.Letter)) error {
	if len(topics) == 0 {
		return errors.New("no topics")
	}
	if perPartition < 0 {
		return errors.New("limit must not be negative")
	}
	admin, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return err
	}
	extents, err := listExtents(ctx, kadm.NewClient(admin), topics)
	admin.Close()
	if err != nil {
		return err
	}
	r, err := newReader(clientOpts, extents)
	if err != nil {
		return err
	}
	defer r.close()
	read := make(map[topicPartition]int)
	for !r.done() {
		batch, err := r.poll(ctx)
		if err != nil {
			return err
		}
		for _, p := range batch {
			tp := topicPartition{p.topic, p.partition}
			for _, rec := range p.records {
				if rec.Attrs.IsControl() {
					continue
				}
				fn(deadletters.FromRecord(rec))
				read[tp]++
				if perPartition > 0 && read[tp] >= perPartition {
					r.stop(p.topic, p.partition)
					break
				}
			}
		}
	}
	return nil
}
