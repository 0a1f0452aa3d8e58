// SPDX-License-Identifier: Apache-2.0

package results

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicPartition names a partition of one of the collector's topics.
type topicPartition struct {
	topic     string
	partition int32
}

// shortfall is a partition that had not been read up to end, its end
// offset one check earlier, at the last check.
type shortfall struct {
	topicPartition
	end int64
}

// partitions is what a Collector knows of its topics' partitions: every
// partition it consumes with the next offset to read there, the end
// offsets of the last check, and the partitions found short at it.
type partitions struct {
	mu sync.Mutex
	// next is the next offset to read of every consumed partition.
	next map[topicPartition]int64
	// ends are the end offsets listed at the last check.
	ends map[topicPartition]int64
	// short are the partitions that, at the last check, had not been read
	// up to the end offsets of the check before.
	short []shortfall
	// checkErr is the last check's error: its listing failed, or failed
	// for some partitions.
	checkErr error
}

// newPartitions returns the partitions of start, each to be read from its
// offset there, and its ends.
func newPartitions(start map[topicPartition]int64) *partitions {
	p := &partitions{next: make(map[topicPartition]int64, len(start)), ends: make(map[topicPartition]int64, len(start))}
	for k, o := range start {
		p.next[k], p.ends[k] = o, o
	}
	return p
}

// advance records that partition's records up to next (exclusive) were read.
func (p *partitions) advance(topic string, partition int32, next int64) {
	k := topicPartition{topic, partition}
	p.mu.Lock()
	if next > p.next[k] {
		p.next[k] = next
	}
	p.mu.Unlock()
}

// update takes a check's listing: it finds the partitions still short of
// the ends of the previous check, stores the new ends, and returns the
// partitions not consumed yet, now recorded as consumed from offset 0.
func (p *partitions) update(ends kadm.ListedOffsets) (added map[string]map[int32]kgo.Offset) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var short []shortfall
	for k, end := range p.ends {
		if p.next[k] < end {
			short = append(short, shortfall{k, end})
		}
	}
	var errs []error
	listed := make(map[topicPartition]int64, len(p.ends))
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s partition %d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		k := topicPartition{o.Topic, o.Partition}
		listed[k] = o.Offset
		if _, ok := p.next[k]; !ok {
			// Created after the collector started: every record on it
			// is an outcome it may be waited for.
			p.next[k] = 0
			if added == nil {
				added = make(map[string]map[int32]kgo.Offset)
			}
			if added[o.Topic] == nil {
				added[o.Topic] = make(map[int32]kgo.Offset)
			}
			added[o.Topic][o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	// A partition whose listing failed keeps the end it had.
	for k, end := range p.ends {
		if _, ok := listed[k]; !ok {
			listed[k] = end
		}
	}
	p.ends, p.short, p.checkErr = listed, short, errors.Join(errs...)
	return added
}

// failed records a check whose listing failed as a whole.
func (p *partitions) failed(err error) {
	p.mu.Lock()
	p.checkErr = err
	p.mu.Unlock()
}

// behind returns the error describing the partitions found short at the
// last check and not read up to their end since, and the last check's
// error; nil when there are none.
func (p *partitions) behind(every time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lines []string
	for _, s := range p.short {
		next := p.next[s.topicPartition]
		if next >= s.end {
			continue // caught up since
		}
		lines = append(lines, fmt.Sprintf("%s partition %d read up to offset %d of %d, its end %s earlier", s.topic, s.partition, next, s.end, every))
	}
	var errs []error
	if len(lines) > 0 {
		slices.Sort(lines)
		const most = 5
		if n := len(lines); n > most {
			lines = append(lines[:most], fmt.Sprintf("and %d more", n-most))
		}
		errs = append(errs, fmt.Errorf("collector behind: %s", strings.Join(lines, "; ")))
	}
	if p.checkErr != nil {
		errs = append(errs, fmt.Errorf("collector: list partitions: %w", p.checkErr))
	}
	return errors.Join(errs...)
}

// watch checks the collector's topics every interval until ctx is done.
func (c *Collector) watch(ctx context.Context) {
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.check(ctx)
		}
	}
}

// check lists the end offsets of the collector's topics: partitions that
// were not read up to the ends of the previous check make the collector
// behind (see Ready), and partitions it does not consume yet are added,
// from their start, so that no outcome written to them is missed.
func (c *Collector) check(ctx context.Context) {
	ends, err := kadm.NewClient(c.client).ListEndOffsets(ctx, c.topics...)
	if err != nil {
		if ctx.Err() == nil {
			c.parts.failed(err)
			c.logger.WarnContext(ctx, "collector: list partitions", "err", err)
		}
		return
	}
	wasBehind := c.Ready() != nil
	added := c.parts.update(ends)
	for topic, ps := range added {
		ids := make([]int32, 0, len(ps))
		for id := range ps {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		c.logger.InfoContext(ctx, "collector: consuming new partitions from their start", "topic", topic, "partitions", ids)
	}
	if len(added) > 0 {
		c.client.AddConsumePartitions(added)
	}
	switch err := c.Ready(); {
	case err != nil && !wasBehind:
		c.logger.WarnContext(ctx, "collector: not ready", "err", err)
	case err == nil && wasBehind:
		c.logger.InfoContext(ctx, "collector: ready again")
	}
}

// Ready reports whether the collector keeps up with its topics: it
// returns an error naming the partitions that, when it last checked its
// topics, it had not read up to the end offsets they had one check
// earlier (and has not read up to since), or the error of that check.
// The collector checks every metadata interval of its client
// (kgo.MetadataMaxAge, which kafkaclient.Options sets). A partition
// added to a topic is consumed from the check that finds it, and counted
// behind only if it is not read up to that check's end by the next one:
// adding partitions does not make the gateways not ready.
func (c *Collector) Ready() error {
	return c.parts.behind(c.every)
}
