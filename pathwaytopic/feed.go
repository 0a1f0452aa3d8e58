// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// Bounds on the feeds of a window.
const (
	// MaxFeeds bounds the feeds of one window: a process runs an index
	// per stage at most.
	MaxFeeds = 16
	// MaxFeedPartitions bounds the partitions of one feed.
	MaxFeedPartitions = 4096
	// ReasonFeed is the InvalidError reason of a bad feed.
	ReasonFeed = "bad feed"
)

// Feed is where one index of a process stands in a topic it follows
// without a consumer group: a worker's index following the documents topic
// (package docfeed). A Publisher given WithFeeds puts its process's feeds
// in every window, so that a reader of the topic can show each worker's
// index and measure how far behind it is (lag.MeasureReaders) with nothing
// but Kafka.
type Feed struct {
	// Name is the index's name: the stage whose index it is.
	Name string
	// Topic is the topic followed.
	Topic string
	// Offsets is, per partition, the next offset to apply: every record
	// before it is applied.
	Offsets map[int32]int64
	// Newest is the timestamp of the newest record applied; zero when
	// none is known.
	Newest time.Time
	// Documents is the number of documents the index holds.
	Documents int64
	// Ready says the index has caught up with the topic since its
	// process started.
	Ready bool
}

// Position is the sum of the feed's offsets: the records applied, over
// the partitions, since the topic's beginning.
func (f Feed) Position() int64 {
	var n int64
	for _, o := range f.Offsets {
		n += o
	}
	return n
}

// wireFeed is a Feed as JSON; feeds are absent from the records of
// earlier releases, and ignored by their readers.
type wireFeed struct {
	Name      string           `json:"name"`
	Topic     string           `json:"topic"`
	Offsets   map[string]int64 `json:"offsets"`
	Newest    time.Time        `json:"newest,omitzero"`
	Documents int64            `json:"documents"`
	Ready     bool             `json:"ready"`
}

func toWireFeeds(feeds []Feed) []wireFeed {
	var out []wireFeed
	for _, f := range feeds {
		wf := wireFeed{Name: f.Name, Topic: f.Topic, Offsets: make(map[string]int64, len(f.Offsets)), Documents: f.Documents, Ready: f.Ready}
		if !f.Newest.IsZero() {
			wf.Newest = f.Newest.UTC()
		}
		for p, o := range f.Offsets {
			wf.Offsets[strconv.Itoa(int(p))] = o
		}
		out = append(out, wf)
	}
	return out
}

// feeds checks and converts the wire feeds of a window, sorted by name and
// topic.
func feedsOf(wfs []wireFeed) ([]Feed, error) {
	if len(wfs) > MaxFeeds {
		return nil, invalid(ReasonFeed, "%d feeds, at most %d", len(wfs), MaxFeeds)
	}
	var out []Feed
	for i, wf := range wfs {
		f, err := wf.feed()
		if err != nil {
			return nil, invalid(ReasonFeed, "feed %d: %v", i, err)
		}
		if slices.ContainsFunc(out, func(g Feed) bool { return g.Name == f.Name && g.Topic == f.Topic }) {
			return nil, invalid(ReasonFeed, "feed %d: %s on %s twice", i, f.Name, f.Topic)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Feed) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Topic, b.Topic)) })
	return out, nil
}

// feed checks one wire feed: a name, a legal topic, partitions and offsets
// that are not negative, a plausible newest time.
func (wf wireFeed) feed() (Feed, error) {
	if err := checkName(ReasonFeed, "name", wf.Name); err != nil {
		return Feed{}, err
	}
	if err := checkTopic(wf.Topic); err != nil {
		return Feed{}, err
	}
	if len(wf.Offsets) > MaxFeedPartitions {
		return Feed{}, invalid(ReasonFeed, "%d partitions, at most %d", len(wf.Offsets), MaxFeedPartitions)
	}
	f := Feed{Name: wf.Name, Topic: wf.Topic, Offsets: make(map[int32]int64, len(wf.Offsets)), Documents: wf.Documents, Ready: wf.Ready}
	for ps, o := range wf.Offsets {
		p, err := strconv.ParseInt(ps, 10, 32)
		if err != nil || p < 0 || strconv.Itoa(int(p)) != ps {
			return Feed{}, invalid(ReasonFeed, "partition %+.20q", ps)
		}
		if o < 0 {
			return Feed{}, invalid(ReasonFeed, "partition %d at offset %d", p, o)
		}
		f.Offsets[int32(p)] = o
	}
	if wf.Documents < 0 || wf.Documents > MaxCount {
		return Feed{}, invalid(ReasonFeed, "%d documents", wf.Documents)
	}
	if !wf.Newest.IsZero() {
		if wf.Newest.Before(earliest) || wf.Newest.After(latest) {
			return Feed{}, invalid(ReasonFeed, "newest %s out of range", wf.Newest)
		}
		f.Newest = wf.Newest
	}
	return f, nil
}
