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
// nothing, and returns the letters in (topic, partition, offset) order: at
// most limit of them, all when limit is 0. It does not wait for letters
// written after it was called. A topic that does not exist is an error.
//
// clientOpts are the connection options (see kafkaclient.Options); List
// creates its own clients from them and closes them before returning.
func List(ctx context.Context, clientOpts []kgo.Opt, topics []string, limit int) ([]deadletters.Letter, error) {
	if len(topics) == 0 {
		return nil, errors.New("list: no topics")
	}
	if limit < 0 {
		return nil, errors.New("list: limit must not be negative")
	}
	admin, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	extents, err := listExtents(ctx, kadm.NewClient(admin), topics)
	admin.Close()
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	r, err := newReader(clientOpts, extents)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	defer r.close()

	// The first limit letters in order come from the first partitions; no
	// partition contributes more than limit, so reading a partition stops
	// there and memory stays bounded by limit × partitions.
	perPartition := make(map[topicPartition]int)
	var letters []deadletters.Letter
	for !r.done() {
		batch, err := r.poll(ctx)
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		for _, p := range batch {
			tp := topicPartition{p.topic, p.partition}
			for _, rec := range p.records {
				if rec.Attrs.IsControl() {
					continue
				}
				letters = append(letters, deadletters.FromRecord(rec))
				perPartition[tp]++
				if limit > 0 && perPartition[tp] >= limit {
					r.stop(p.topic, p.partition)
					break
				}
			}
		}
	}
	slices.SortFunc(letters, func(a, b deadletters.Letter) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	if limit > 0 && len(letters) > limit {
		letters = letters[:limit]
	}
	return letters, nil
}
