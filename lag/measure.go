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

// Bounds of one measurement.
const (
	// measureTimeout bounds a whole Measure call, whatever ctx allows.
	measureTimeout = 30 * time.Second
	// readTimeout bounds reading the oldest unconsumed records.
	readTimeout = 5 * time.Second
)

// PartitionLag is the lag of one consumer group on one partition.
//
// An entry with an empty Topic and Partition -1 carries an error about the
// whole group (Err), such as kerr.GroupIDNotFound for a group that does not
// exist.
type PartitionLag struct {
	Group     string
	Topic     string
	Partition int32
	// Committed is the group's committed offset, -1 when nothing is committed.
	Committed int64
	// End is the partition's end offset (the offset of the next record
	// produced), -1 when it could not be listed.
	End int64
	// Records is End - Committed, or End - the log start offset when nothing
	// is committed; never negative when known, -1 when the offsets could not
	// be read (Err says why).
	Records int64
	// Seconds is the age of the oldest unconsumed record: the measurement
	// time minus the timestamp of the record at the committed offset (or at
	// the log start when nothing is committed), 0 when Records is 0 or the
	// timestamp lies in the future, -1 when the record could not be read
	// (Err says why).
	Seconds float64
	// OldestTimestamp is the timestamp of that record; zero when Records is 0
	// or the record could not be read.
	OldestTimestamp time.Time
	// Err is set when part of the entry could not be measured.
	Err error
	// Skew is set when record timestamps and the measuring process's
	// clock disagree: negative when the oldest record's timestamp lay
	// in the future (by -Skew seconds; Seconds is 0), positive when a
	// Monitor bounded Seconds because the record was younger than its
	// timestamp says (by Skew seconds at least; see Monitor).
	Skew float64
	// Members is the number of members of the group at the measurement
	// (0: the group is empty), -1 when unknown or not a group (a Reader).
	Members int
	// Health is the lag's health over a window of measurements, set by a
	// Monitor (or a Tracker); unknown in a single measurement.
	Health Health
}

// Measure returns the lag of the given consumer groups on every partition
// they have committed offsets for or are assigned, sorted by group, topic
// and partition. Without groups it measures every group of the cluster.
//
// Lag in records comes from kadm (DescribeGroups, OffsetFetch, ListOffsets).
// Lag in seconds comes from the timestamp of the oldest unconsumed record of
// each lagging partition, read with one short-lived direct consumer for all
// partitions at once that stops after one record per partition or after 5 s.
//
// A group that does not exist is reported as an entry with an empty Topic,
// Partition -1 and an Err matching kerr.GroupIDNotFound; a group that exists
// but has neither committed offsets nor assigned partitions has no entries.
// Errors about one group or partition are reported in the entries; the
// returned error is for a measurement that failed as a whole (no broker
// reachable, not authorized, ctx done).
//
// baseOpts configure the clients (seed brokers, client id, logger, hooks);
// they must not configure consuming (no consumer group, topics or
// partitions). Measure returns within 30 s, or sooner when ctx ends.
func Measure(ctx context.Context, baseOpts []kgo.Opt, groups ...string) ([]PartitionLag, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, measureTimeout)
	defer cancel()

	client, err := kgo.NewClient(kafkaclient.ReadOnly(baseOpts)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer client.Close()
	// kadm.Client.Lag reuses its argument's backing array: pass a copy.
	described, err := kadm.NewClient(client).Lag(ctx, slices.Clone(groups)...)
	if err != nil {
		return nil, fmt.Errorf("group lag: %w", err)
	}
	at := time.Now()

	lags := fromKadm(described, groups)
	readOldest(ctx, baseOpts, lags, at)
	if err := parent.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(lags, func(a, b PartitionLag) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return lags, nil
}

// fromKadm converts kadm's group lags; requested groups it has nothing about
// are reported as not found.
func fromKadm(described kadm.DescribedGroupLags, requested []string) []PartitionLag {
	var out []PartitionLag
	groupErr := func(group string, err error) {
		out = append(out, PartitionLag{Group: group, Partition: -1, Committed: -1, End: -1, Records: -1, Seconds: -1, Members: -1, Health: unknownHealth, Err: err})
	}
	for _, g := range described.Sorted() {
		if err := g.Error(); err != nil {
			groupErr(g.Group, fmt.Errorf("group %s: %w", g.Group, err))
			continue
		}
		if g.State == "Dead" {
			// Brokers before DescribeGroups v6 describe an unknown group as
			// Dead without an error.
			groupErr(g.Group, fmt.Errorf("group %s: %w", g.Group, kerr.GroupIDNotFound))
			continue
		}
		for _, m := range g.Lag.Sorted() {
			pl := PartitionLag{
				Group:     g.Group,
				Topic:     m.Topic,
				Partition: m.Partition,
				Committed: m.Commit.At,
				End:       -1,
				Records:   m.Lag,
				Members:   len(g.Members),
				Health:    unknownHealth,
			}
			if m.End.Err == nil {
				pl.End = m.End.Offset
			}
			if pl.Committed < 0 {
				pl.Committed = -1
			}
			if m.Err != nil {
				pl.Records, pl.Seconds = -1, -1
				pl.Err = fmt.Errorf("offsets: %w", m.Err)
			}
			out = append(out, pl)
		}
	}
	for _, g := range requested {
		if _, ok := described[g]; !ok && !slices.ContainsFunc(out, func(l PartitionLag) bool { return l.Group == g }) {
			groupErr(g, fmt.Errorf("group %s: %w", g, kerr.GroupIDNotFound))
		}
	}
	return out
}

// position is where the oldest unconsumed record of a partition is.
type position struct {
	topic     string
	partition int32
	offset    int64 // -1: the log start
}

// readOldest fills Seconds and OldestTimestamp of every lagging entry
// (Records > 0) from the record at its committed offset, or at the log
// start when nothing is committed. Entries whose record cannot be read get
// Seconds -1 and an Err.
func readOldest(ctx context.Context, baseOpts []kgo.Opt, lags []PartitionLag, at time.Time) {
	want := map[position][]int{} // position -> indexes into lags
	for i := range lags {
		l := &lags[i]
		if l.Err != nil || l.Records <= 0 {
			continue
		}
		pos := position{l.Topic, l.Partition, l.Committed}
		want[pos] = append(want[pos], i)
	}
	if len(want) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()

	// One consumer can read a partition from one offset only: groups at
	// different offsets of the same partition are read in separate rounds,
	// run concurrently.
	results := make(chan map[position]readResult)
	rounds := splitRounds(want)
	for _, round := range rounds {
		go func() { results <- readRound(ctx, baseOpts, round) }()
	}
	found := map[position]readResult{}
	for range rounds {
		for pos, r := range <-results {
			found[pos] = r
		}
	}
	for pos, idx := range want {
		r, ok := found[pos]
		if !ok {
			r.err = fmt.Errorf("no record at %s within %s", positionString(pos.offset), readTimeout)
			if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				r.err = err
			}
		}
		for _, i := range idx {
			l := &lags[i]
			if r.err != nil {
				l.Seconds, l.Err = -1, fmt.Errorf("read oldest record: %w", r.err)
				continue
			}
			l.OldestTimestamp = r.timestamp
			l.Seconds = max(at.Sub(r.timestamp).Seconds(), 0)
			if r.timestamp.After(at) {
				l.Skew = -r.timestamp.Sub(at).Seconds()
			}
		}
	}
}

func positionString(o int64) string {
	if o < 0 {
		return "the log start"
	}
	return fmt.Sprint("offset ", o)
}

// splitRounds splits positions into rounds holding each partition at most once.
func splitRounds(want map[position][]int) [][]position {
	type tp struct {
		topic     string
		partition int32
	}
	seen := map[tp]int{} // partition -> rounds it is in
	var rounds [][]position
	for pos := range want {
		k := tp{pos.topic, pos.partition}
		n := seen[k]
		seen[k] = n + 1
		if n == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[n] = append(rounds[n], pos)
	}
	return rounds
}

type readResult struct {
	timestamp time.Time
	err       error
}

// readRound reads the first record at or after each position (each partition
// appears once) and returns what it found before ctx ended.
func readRound(ctx context.Context, baseOpts []kgo.Opt, round []position) map[position]readResult {
	out := make(map[position]readResult, len(round))
	fail := func(err error) map[position]readResult {
		for _, pos := range round {
			out[pos] = readResult{err: err}
		}
		return out
	}
	offsets := map[string]map[int32]kgo.Offset{}
	byPartition := map[string]map[int32]position{}
	for _, pos := range round {
		if offsets[pos.topic] == nil {
			offsets[pos.topic] = map[int32]kgo.Offset{}
			byPartition[pos.topic] = map[int32]position{}
		}
		o := kgo.NewOffset().AtStart()
		if pos.offset >= 0 {
			// An offset below the log start (records deleted) is read
			// from the log start: the oldest record still there.
			o = kgo.NewOffset().At(pos.offset)
		}
		offsets[pos.topic][pos.partition] = o
		byPartition[pos.topic][pos.partition] = pos
	}
	opts := slices.Concat(baseOpts, []kgo.Opt{
		kgo.ConsumePartitions(offsets),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.FetchMaxBytes(1 << 20),
		kgo.FetchMaxPartitionBytes(16 << 10),
	})
	client, err := kgo.NewClient(kafkaclient.ReadOnly(opts)...)
	if err != nil {
		return fail(fmt.Errorf("kafka client: %w", err))
	}
	defer client.Close()

	for len(out) < len(round) && ctx.Err() == nil {
		fetches := client.PollFetches(ctx)
		done := map[string][]int32{}
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			pos, ok := byPartition[p.Topic][p.Partition]
			if !ok {
				return
			}
			if _, seen := out[pos]; seen {
				return
			}
			switch {
			case len(p.Records) > 0:
				out[pos] = readResult{timestamp: p.Records[0].Timestamp}
			case p.Err != nil:
				out[pos] = readResult{err: p.Err}
			default:
				return
			}
			done[p.Topic] = append(done[p.Topic], p.Partition)
		})
		client.PauseFetchPartitions(done)
	}
	return out
}
