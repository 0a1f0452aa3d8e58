// SPDX-License-Identifier: Apache-2.0

package main

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

	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/search"
)

// documentsState is the documents topic's final state as workers apply it
// (package docfeed): each id's latest document, read from the log start to
// the end offsets the topic had when reading began.
type documentsState struct {
	topic string
	// starts and ends are every partition's log start and end offsets
	// when reading began.
	starts, ends map[int32]int64
	// versions maps each id to its document's version
	// (search.Document.Hash).
	versions map[string]string
	// docs holds the documents themselves, when asked for.
	docs map[string]search.Document
	// refused counts the records that are not documents, which workers
	// dead-letter and skip.
	refused int
	// newest is the timestamp of the newest record read, control records
	// aside.
	newest time.Time
}

// readDocumentsState reads topic's final state, keeping the documents
// themselves when keepDocs is set (else only their versions).
func readDocumentsState(ctx context.Context, opts []kgo.Opt, topic string, keepDocs bool) (*documentsState, error) {
	s := &documentsState{topic: topic, versions: map[string]string{}}
	if keepDocs {
		s.docs = map[string]search.Document{}
	}
	starts, ends, err := readDocumentsTopic(ctx, opts, topic, s.fold)
	if err != nil {
		return nil, err
	}
	s.starts, s.ends = starts, ends
	return s, nil
}

// fold applies one record as a worker applies it: a tombstone deletes its
// key, a document upserts; a record that is not a document (see
// docfeed.Decode) changes nothing.
func (s *documentsState) fold(r *kgo.Record) {
	if r.Attrs.IsControl() {
		return
	}
	if r.Timestamp.After(s.newest) {
		s.newest = r.Timestamp
	}
	c, err := docfeed.Decode(r)
	switch {
	case err != nil:
		s.refused++
	case c.Doc == nil:
		delete(s.versions, c.ID)
		delete(s.docs, c.ID)
	default:
		s.versions[c.ID] = c.Doc.Hash()
		if s.docs != nil {
			s.docs[c.ID] = *c.Doc
		}
	}
}

// digest is the digest of the state's documents, as a worker's index
// holding exactly them reports it.
func (s *documentsState) digest() search.Digest {
	var d search.Digest
	for id, v := range s.versions {
		d.Add(id, v)
	}
	return d
}

// documents returns the state's documents (kept by readDocumentsState),
// by id.
func (s *documentsState) documents() []search.Document {
	out := make([]search.Document, 0, len(s.docs))
	for _, id := range slices.Sorted(maps.Keys(s.docs)) {
		out = append(out, s.docs[id])
	}
	return out
}

// position is where an index holding the state stands in the topic:
// every partition at its end offset, as new as its newest record.
func (s *documentsState) position() search.Position {
	return search.Position{Topic: s.topic, Offsets: maps.Clone(s.ends), Newest: s.newest}
}

// readDocumentsTopic reads topic from its log start to the end offsets it
// has now, every partition, without a consumer group, calling fold with
// each record, control records included, in offset order per partition.
// It returns every partition's log start and end offsets, as read; none
// when the topic does not exist (yet).
func readDocumentsTopic(ctx context.Context, opts []kgo.Opt, topic string, fold func(*kgo.Record)) (starts, ends map[int32]int64, err error) {
	starts, ends, err = topicExtents(ctx, opts, topic)
	if err != nil {
		return nil, nil, err
	}
	from, until := map[int32]kgo.Offset{}, map[int32]int64{}
	for p, end := range ends {
		if starts[p] < end {
			from[p], until[p] = kgo.NewOffset().At(starts[p]), end
		}
	}
	if len(until) == 0 {
		return starts, ends, nil
	}
	// Transaction markers take offsets too: seeing them is how a
	// partition whose last offset is a marker is known to be done.
	client, err := kgo.NewClient(slices.Concat(opts, []kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}), kgo.KeepControlRecords()})...)
	if err != nil {
		return nil, nil, err
	}
	defer client.Close()
	for len(until) > 0 {
		fs := client.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := fs.Err0(); err != nil {
			return nil, nil, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, reading := until[r.Partition]
			if !reading || r.Offset >= end {
				return
			}
			if r.Offset+1 >= end {
				delete(until, r.Partition)
				client.RemoveConsumePartitions(map[string][]int32{topic: {r.Partition}})
			}
			fold(r)
		})
	}
	return starts, ends, nil
}

// topicExtents returns every partition's log start and end offset of
// topic, as of now. A topic not known yet (just created) has none.
func topicExtents(ctx context.Context, opts []kgo.Opt, topic string) (starts, ends map[int32]int64, err error) {
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, err
	}
	defer client.Close()
	adm := kadm.NewClient(client)
	listedStarts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = listedStarts.Error()
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list start offsets: %w", err)
	}
	listedEnds, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = listedEnds.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list end offsets: %w", err)
	}
	starts, ends = map[int32]int64{}, map[int32]int64{}
	listedEnds.Each(func(e kadm.ListedOffset) {
		ends[e.Partition] = e.Offset
		if s, ok := listedStarts.Lookup(topic, e.Partition); ok {
			starts[e.Partition] = min(s.Offset, e.Offset)
		}
	})
	return starts, ends, nil
}
