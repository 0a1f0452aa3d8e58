package status

import (
	"cmp"
	"context"
	"slices"
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

// readerName names the reader of one instance's feed in a lag measurement.
func readerName(f feedOf) string { return f.feed.Name + "@" + f.instance.Instance }

// measureFeeds measures the lag of every feed from where it said it stood
// (lag.MeasureReaders: one listing and one read for all), by readerName.
func measureFeeds(ctx context.Context, kafkaOpts []kgo.Opt, feeds []feedOf) (map[string][]lag.PartitionLag, error) {
	if len(feeds) == 0 {
		return nil, nil
	}
	readers := make([]lag.Reader, 0, len(feeds))
	for _, f := range feeds {
		offsets := f.feed.Offsets
		readers = append(readers, lag.Reader{Name: readerName(f), Topic: f.feed.Topic, Offsets: func() map[int32]int64 { return offsets }})
	}
	lags, err := lag.MeasureReaders(ctx, kafkaOpts, readers...)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]lag.PartitionLag, len(feeds))
	for _, l := range lags {
		out[l.Group] = append(out[l.Group], l)
	}
	return out, nil
}

// indexesOf groups the feeds by index (name and topic) with their
// workers, the rate and freshness of the records they applied, and their
// lags (lags by readerName; lagErr when they could not be measured).
func indexesOf(v pathwaytopic.View, feeds []feedOf, lags map[string][]lag.PartitionLag, lagErr error, now time.Time) []Index {
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
			w.Lag = lagOf(lags[readerName(f)])
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
