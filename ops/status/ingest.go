// SPDX-License-Identifier: Apache-2.0

package status

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

// Index is one index that follows the documents topic, as every worker
// whose stage it serves keeps it (package docfeed): the ingestion edge
// from the topic into it.
type Index struct {
	// Name is the index's name: the stage whose workers keep it
	// ("index" for `kretrieve run`'s, which both stages search).
	Name string
	// Topic is the topic it follows.
	Topic string
	// Rate is the records applied per second over its workers in the
	// windows.
	Rate float64
	// Freshness is the edge latency of the records applied: from their
	// publication to their being searchable.
	Freshness Quantiles
	// Lag is the worst of the workers' lags that are not stale: the most
	// records left, and the oldest record waiting.
	Lag Lag
	// Workers are the processes keeping it, by instance.
	Workers []IndexWorker
}

// IndexWorker is one process's copy of an index.
type IndexWorker struct {
	// Instance and Service identify the process.
	Instance, Service string
	// Stale says its last window ended too long ago: the process stopped
	// or cannot publish; its numbers are those of then, its lag is
	// measured from where it stood.
	Stale bool
	// Ready says it has caught up since its process started.
	Ready bool
	// Position is the sum of the offsets it has applied.
	Position int64
	// Documents is the documents it holds.
	Documents int64
	// NewestAgeMS is the age now of the newest record it has applied, in
	// milliseconds; unknown when it has applied none.
	NewestAgeMS Maybe[float64]
	// Lag is how far it is behind the topic now, from where it said it
	// stood.
	Lag Lag
}

// feedOf is one instance's feed, measured.
type feedOf struct {
	instance pathwaytopic.Instance
	feed     pathwaytopic.Feed
}

// feedsOf returns every feed of the view's instances, by index name, topic
// and instance.
func feedsOf(v pathwaytopic.View) []feedOf {
	var out []feedOf
	for _, in := range v.Instances {
		for _, f := range in.Feeds {
			out = append(out, feedOf{instance: in, feed: f})
		}
	}
	slices.SortFunc(out, func(a, b feedOf) int {
		return cmp.Or(cmp.Compare(a.feed.Name, b.feed.Name), cmp.Compare(a.feed.Topic, b.feed.Topic), cmp.Compare(a.instance.Instance, b.instance.Instance))
	})
	return out
}

// FeedLag is the lag of one process's index on one partition of the topic
// it follows: a lag.PartitionLag whose Group is the index's name.
type FeedLag struct {
	// Instance is the process whose index it is.
	Instance string
	lag.PartitionLag
}

// MeasureFeeds measures the lag, per partition, of every index the
// view's instances say they keep (their windows' feeds), stale instances
// included, from where each said it stood: with lag.MeasureReaders, one
// listing of the offsets and one read of the oldest records for all. The
// entries are by index name, topic, instance and partition.
func MeasureFeeds(ctx context.Context, kafkaOpts []kgo.Opt, v pathwaytopic.View) ([]FeedLag, error) {
	feeds := feedsOf(v)
	if len(feeds) == 0 {
		return nil, nil
	}
	readers := make([]lag.Reader, 0, len(feeds))
	for i, f := range feeds {
		offsets := f.feed.Offsets
		// Named by position: instance ids may hold any character.
		readers = append(readers, lag.Reader{Name: strconv.Itoa(i), Topic: f.feed.Topic, Offsets: func() map[int32]int64 { return offsets }})
	}
	lags, err := lag.MeasureReaders(ctx, kafkaOpts, readers...)
	if err != nil {
		return nil, err
	}
	out := make([]FeedLag, 0, len(lags))
	for _, l := range lags {
		i, _ := strconv.Atoi(l.Group)
		l.Group = feeds[i].feed.Name
		out = append(out, FeedLag{Instance: feeds[i].instance.Instance, PartitionLag: l})
	}
	return out, nil
}

// feedLags returns the lags of each (index name, instance), by feedKey.
func feedLags(lags []FeedLag) map[feedKey][]lag.PartitionLag {
	out := map[feedKey][]lag.PartitionLag{}
	for _, l := range lags {
		k := feedKey{l.Group, l.Topic, l.Instance}
		out[k] = append(out[k], l.PartitionLag)
	}
	return out
}

// feedKey identifies one process's index.
type feedKey struct{ name, topic, instance string }

// indexesOf groups the feeds by index (name and topic) with their
// workers, the rate and freshness of the records they applied, and their
// lags (lags by feedKey; lagErr when they could not be measured).
func indexesOf(v pathwaytopic.View, feeds []feedOf, lags map[feedKey][]lag.PartitionLag, lagErr error, now time.Time) []Index {
	out := []Index{}
	for _, f := range feeds {
		if n := len(out); n == 0 || out[n-1].Name != f.feed.Name || out[n-1].Topic != f.feed.Topic {
			ix := Index{Name: f.feed.Name, Topic: f.feed.Topic, Workers: []IndexWorker{}, Lag: Lag{Records: Of[int64](0), Seconds: Of(0.0)}}
			var edge pathway.Snapshot
			ix.Rate, edge, _ = pathwayOf(v, f.feed.Topic, f.feed.Name)
			ix.Freshness = quantilesOf(edge)
			out = append(out, ix)
		}
		ix := &out[len(out)-1]
		w := IndexWorker{Instance: f.instance.Instance, Service: f.instance.Service, Stale: f.instance.Stale, Ready: f.feed.Ready,
			Position: f.feed.Position(), Documents: f.feed.Documents}
		if !f.feed.Newest.IsZero() {
			w.NewestAgeMS = Of(ms(now.Sub(f.feed.Newest)))
		}
		switch {
		case lagErr != nil:
			w.Lag = Lag{Error: lagErr.Error()}
		default:
			w.Lag = lagOf(lags[feedKey{f.feed.Name, f.feed.Topic, f.instance.Instance}])
		}
		if !w.Stale {
			ix.Lag = worse(ix.Lag, w.Lag)
		}
		ix.Workers = append(ix.Workers, w)
	}
	return out
}

// worse is the worse of two lags: the most records and the oldest record,
// each unknown when either is.
func worse(a, b Lag) Lag {
	out := Lag{Error: cmp.Or(a.Error, b.Error)}
	if a.Records.Known && b.Records.Known {
		out.Records = Of(max(a.Records.V, b.Records.V))
	}
	if a.Seconds.Known && b.Seconds.Known {
		out.Seconds = Of(max(a.Seconds.V, b.Seconds.V))
	}
	return out
}
