// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
)

// ledger counts, per request id, what the load published and what came
// out of the pipeline: results, dead letters, and (for poison records) how
// often the record appeared on the requests topic, original and replays.
type ledger struct {
	mu          sync.Mutex
	issued      map[string]time.Time // published at (the produce call)
	acked       map[string]bool      // acknowledged by the broker
	produceErrs map[string]int       // errors of unacknowledged produces, by text
	answered    map[string]int
	lettered    map[string]int
	first       map[string]time.Time // first outcome's record timestamp
	onRequests  map[string]int       // poison and stall keys seen on the requests topic
	undecodable int
}

func newLedger() *ledger {
	return &ledger{
		issued: map[string]time.Time{}, acked: map[string]bool{},
		produceErrs: map[string]int{}, answered: map[string]int{}, lettered: map[string]int{},
		first: map[string]time.Time{}, onRequests: map[string]int{},
	}
}

// publish produces one request record keyed by id and records its
// acknowledgement.
func (l *ledger) publish(ctx context.Context, cl *kgo.Client, topic, id string, value []byte) {
	l.mu.Lock()
	l.issued[id] = time.Now()
	l.mu.Unlock()
	cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(id), Value: value}, func(_ *kgo.Record, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			l.produceErrs[err.Error()]++
			return
		}
		l.acked[id] = true
	})
}

// read consumes the requests, results and dead-letter topics from their
// start, partitions added later included, until ctx is done.
func (l *ledger) read(ctx context.Context, cl *kgo.Client, topics messages.Topics) {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		fs.EachRecord(func(r *kgo.Record) { l.record(r, topics) })
	}
}

func (l *ledger) record(r *kgo.Record, topics messages.Topics) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := string(r.Key)
	switch {
	case r.Topic == topics.Requests:
		if strings.HasPrefix(key, poisonPrefix) || strings.HasPrefix(key, stallPrefix) {
			l.onRequests[key]++
		}
		return
	case r.Topic == topics.Results:
		res, err := messages.DecodeResult(r.Value)
		if err != nil {
			l.undecodable++
			return
		}
		key = res.RequestID
		l.answered[key]++
	case strings.HasSuffix(r.Topic, messages.DLQSuffix):
		l.lettered[key]++
	default:
		return
	}
	if _, ok := l.first[key]; !ok {
		l.first[key] = r.Timestamp
	}
}

// published reports whether id (a poison or stall request) was seen on the
// requests topic.
func (l *ledger) published(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.onRequests[id] > 0
}

// answeredID reports whether a result for id was read.
func (l *ledger) answeredID(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.answered[id] > 0
}

// poisonPrefix starts the key of every poison record.
const poisonPrefix = "poison-"

// report is what the chaos run counts over the load's requests (the poison
// records of the replay phase apart).
type report struct {
	Sent, Unacked, Answered, DeadLettered, Duplicated, Lost int
	LostIDs                                                 []string
	MaxLatency, P99Latency                                  time.Duration
	SlowestID                                               string
	Slowest                                                 []slow // the slowest few, slowest first
}

// slow is one request's wait for its first outcome, and when it was
// published, for reading against the run's timeline.
type slow struct {
	ID     string
	Issued time.Time
	Wait   time.Duration
}

// count reports on the load's ids (those not starting with poisonPrefix).
func (l *ledger) count() report {
	l.mu.Lock()
	defer l.mu.Unlock()
	var r report
	var lat []time.Duration
	var waits []slow
	for id, at := range l.issued {
		if strings.HasPrefix(id, poisonPrefix) {
			continue
		}
		r.Sent++
		if !l.acked[id] {
			r.Unacked++
		}
		a, d := l.answered[id], l.lettered[id]
		switch {
		case a > 0:
			r.Answered++
		case d > 0:
			r.DeadLettered++
		case l.acked[id]:
			r.Lost++
			r.LostIDs = append(r.LostIDs, id)
		}
		if a+d > 1 {
			r.Duplicated += a + d - 1
		}
		if f, ok := l.first[id]; ok && !strings.HasPrefix(id, refusedPrefix) {
			// The refused-writes phase's requests wait out the refusal
			// on purpose: not counted against the stall bound.
			d := f.Sub(at)
			lat = append(lat, d)
			waits = append(waits, slow{ID: id, Issued: at, Wait: d})
			if d > r.MaxLatency {
				r.MaxLatency, r.SlowestID = d, id
			}
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		r.P99Latency = lat[len(lat)*99/100]
	}
	slices.SortFunc(waits, func(a, b slow) int { return int(b.Wait - a.Wait) })
	r.Slowest = waits[:min(len(waits), 5)]
	slices.Sort(r.LostIDs)
	return r
}

// pending is how many acknowledged load requests have no outcome yet.
func (l *ledger) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id := range l.acked {
		if !strings.HasPrefix(id, poisonPrefix) && l.answered[id]+l.lettered[id] == 0 {
			n++
		}
	}
	return n
}

// poison reports on the poison keys: how many have a dead letter, the
// dead letters in all, and the records on the requests topic in all.
func (l *ledger) poison() (keys, letters, onRequests int, perKey map[int]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	perKey = map[int]int{}
	for k, n := range l.onRequests {
		if !strings.HasPrefix(k, poisonPrefix) {
			continue // the stall phase's searches
		}
		onRequests += n
		perKey[n]++
		letters += l.lettered[k]
		if l.lettered[k] > 0 {
			keys++
		}
	}
	return keys, letters, onRequests, perKey
}

// ackedPoison is how many poison records the broker acknowledged, and the
// produce errors so far by text.
func (l *ledger) ackedPoison() (int, map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id, ok := range l.acked {
		if ok && strings.HasPrefix(id, poisonPrefix) {
			n++
		}
	}
	return n, maps.Clone(l.produceErrs)
}
