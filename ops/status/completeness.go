// SPDX-License-Identifier: Apache-2.0

package status

import (
	"cmp"
	"slices"
	"time"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/topology"
)

// DefaultUnfinishedAfter is Config.UnfinishedAfter's default: three
// publish intervals of the pathway windows (pathwaytopic.DefaultInterval),
// so that every process has published the counts of a cohort before it is
// judged, and well over a request's usual end-to-end time.
const DefaultUnfinishedAfter = 3 * pathwaytopic.DefaultInterval

// Completeness says how many requests of each origin-time cohort entered
// the pipeline and how many ended, from the pathway windows alone: it
// holds for every request, whatever the trace sampling.
//
// A request enters when its pathway starts on the topology's first topic
// (the request client's produce, or the first stage's read of a record
// without a pathway header), and ends at a terminal checkpoint: its result
// written to the results topic (or read from it, whichever more records
// passed: a process killed before publishing loses its counts), its dead
// letter written, or its expiry. A cohort (pathway.CohortWidth of origin
// times) is judged once it ended UnfinishedAfter ago; its unfinished
// requests are entered minus ended, at least 0. At-least-once redelivery
// and replays count a request twice where they pass twice, so a duplicate
// can hide an unfinished request of the same cohort; a request older than
// pathway.CohortHorizon is no longer judged.
//
// Its JSON form is the one `kretrieve pathways --json` and the console
// send.
type Completeness struct {
	// UnfinishedAfter is how long after its end a cohort is judged.
	UnfinishedAfter time.Duration `json:"-"`
	// UnfinishedAfterSeconds is UnfinishedAfter in seconds.
	UnfinishedAfterSeconds float64 `json:"unfinished_after_seconds"`
	// Since is the first origin time counted (the horizon), Until the end
	// of the last cohort judged.
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Entered, Ended and Unfinished sum the cohorts judged.
	Entered    uint64 `json:"entered"`
	Ended      uint64 `json:"ended"`
	Unfinished uint64 `json:"unfinished"`
	// Expired are the ended requests that expired (a terminal checkpoint
	// of direction pathway.Expired); DeadLettered those dead-lettered.
	Expired      uint64 `json:"expired"`
	DeadLettered uint64 `json:"dead_lettered"`
	// Cohorts are the judged cohorts with unfinished requests, oldest
	// first.
	Cohorts []Cohort `json:"cohorts"`
	// Waiting sums the cohorts' Waiting by place, most first.
	Waiting []Waiting `json:"waiting"`
}

// Cohort is the requests whose origin fell in one bin.
type Cohort struct {
	// Origin is the bin's start.
	Origin time.Time `json:"origin"`
	// Entered, Ended and Unfinished count its requests.
	Entered    uint64 `json:"entered"`
	Ended      uint64 `json:"ended"`
	Unfinished uint64 `json:"unfinished"`
	// Waiting is where its unfinished requests are, most first: at most
	// Unfinished in all.
	Waiting []Waiting `json:"waiting"`
}

// Waiting is a number of requests at one place of the pipeline.
type Waiting struct {
	// Where names the place: "retrieval.candidates → enrichment" (queued)
	// or "in enrichment".
	Where string `json:"where"`
	// Topic is the topic written; Group the group that reads it (the
	// topology's), "" when none does.
	Topic string `json:"topic"`
	Group string `json:"group"`
	// Queued says the requests were written to Topic and Group has not
	// started them; otherwise Group started them and wrote nothing yet.
	Queued bool `json:"queued"`
	// Count is the number of requests.
	Count uint64 `json:"count"`
}

// newWaiting returns the place of records queued on topic for group, or
// (queued false) started by group.
func newWaiting(topic, group string, queued bool) Waiting {
	w := Waiting{Topic: topic, Group: group, Queued: queued}
	switch {
	case !queued:
		w.Where = "in " + group
	case group == "":
		w.Where = topic
	default:
		w.Where = topic + " → " + group
	}
	return w
}

// completenessOf judges the cohorts of v at now.
func completenessOf(v pathwaytopic.View, topo topology.Topology, now time.Time, after time.Duration) Completeness {
	c := Completeness{UnfinishedAfter: after, UnfinishedAfterSeconds: after.Seconds(), Since: time.Unix(v.CohortsSince, 0).UTC(), Waiting: []Waiting{}, Cohorts: []Cohort{}}
	width := int64(pathway.CohortWidth / time.Second)
	last := now.Add(-after).Unix() - width // the last bin start judged
	last -= ((last % width) + width) % width
	c.Until = time.Unix(last+width, 0).UTC()
	p := newPlaces(topo, v.Cohorts)
	waiting := map[Waiting]uint64{}
	for bin := v.CohortsSince; bin <= last && v.CohortsSince != 0; bin += width {
		entered, ended, expired, dead := p.ends(bin)
		c.Entered += entered
		c.Ended += ended
		c.Expired += expired
		c.DeadLettered += dead
		if entered <= ended {
			continue
		}
		co := Cohort{Origin: time.Unix(bin, 0).UTC(), Entered: entered, Ended: ended, Unfinished: entered - ended, Waiting: p.waiting(bin, entered-ended)}
		c.Unfinished += co.Unfinished
		for _, w := range co.Waiting {
			k := w
			k.Count = 0
			waiting[k] += w.Count
		}
		c.Cohorts = append(c.Cohorts, co)
	}
	for w, n := range waiting {
		w.Count = n
		c.Waiting = append(c.Waiting, w)
	}
	sortWaiting(c.Waiting)
	return c
}

func sortWaiting(ws []Waiting) {
	slices.SortFunc(ws, func(a, b Waiting) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Where, b.Where)) })
}

// places are the cohort series of a view sorted by their part in the
// pipeline.
type places struct {
	topo topology.Topology
	// pathways are the terminal places by the pathway root their records
	// entered at (0: none in the view).
	pathways map[uint64]*ends
	inner    []pathwaytopic.CohortSeries // on the pipeline's topics, not terminal
	children map[uint64][]pathwaytopic.CohortSeries
}

// ends are the series where the requests of one pathway root enter and
// where they end.
type ends struct {
	// entered are the root's series. A root is where requests enter: a
	// pathway starting on the first topic (a request client's send, or a
	// worker's read of a record without a pathway header), or a worker's
	// read on the first topic of a record whose producer publishes no
	// windows (its send is in no window).
	entered []pathwaytopic.CohortSeries
	results []pathwaytopic.CohortSeries // written to the results topic
	readers map[string][]pathwaytopic.CohortSeries
	dead    []pathwaytopic.CohortSeries // dead letters written
	expired []pathwaytopic.CohortSeries
}

func newPlaces(topo topology.Topology, series []pathwaytopic.CohortSeries) *places {
	p := &places{topo: topo, pathways: map[uint64]*ends{}, children: map[uint64][]pathwaytopic.CohortSeries{}}
	topics := topo.Topics()
	pipeline := map[string]bool{}
	for _, t := range topics {
		pipeline[t] = true
	}
	dlqs := map[string]bool{}
	for _, s := range topo.Stages {
		dlqs[messages.DLQTopic(s.Input)] = true
	}
	first, results := topics[0], topics[len(topics)-1]
	parents := make(map[uint64]uint64, len(series))
	for _, s := range series {
		parents[s.Hash] = s.Parent
	}
	isRoot := func(s pathwaytopic.CohortSeries) bool {
		if s.Checkpoint.Topic != first {
			return false
		}
		_, known := parents[s.Parent]
		return s.Parent == 0 || s.Checkpoint.Direction == pathway.In && !known
	}
	roots := map[uint64]bool{}
	for _, s := range series {
		if s.Hash != 0 && pipeline[s.Checkpoint.Topic] && isRoot(s) {
			roots[s.Hash] = true
		}
	}
	for _, s := range series {
		cp := s.Checkpoint
		if s.Hash == 0 { // overflow series: no pathway to place them on
			continue
		}
		if s.Parent != 0 {
			p.children[s.Parent] = append(p.children[s.Parent], s)
		}
		e := p.endsOf(rootOf(s.Hash, parents, roots))
		switch {
		case cp.Direction == pathway.Expired:
			e.expired = append(e.expired, s)
		case dlqs[cp.Topic] && cp.Direction == pathway.Out:
			e.dead = append(e.dead, s)
		case cp.Topic == results && cp.Direction == pathway.Out:
			e.results = append(e.results, s)
		case cp.Topic == results:
			who := cmp.Or(cp.Group, cp.Service)
			e.readers[who] = append(e.readers[who], s)
		case pipeline[cp.Topic]:
			if roots[s.Hash] {
				e.entered = append(e.entered, s)
			}
			p.inner = append(p.inner, s)
		}
	}
	return p
}

// endsOf returns root's ends, made when missing.
func (p *places) endsOf(root uint64) *ends {
	e := p.pathways[root]
	if e == nil {
		e = &ends{readers: map[string][]pathwaytopic.CohortSeries{}}
		p.pathways[root] = e
	}
	return e
}

// rootOf follows hash's parents to the root it starts from, 0 when the
// chain leaves the view first (a gap: a process that publishes no
// windows, or one killed before it published).
func rootOf(hash uint64, parents map[uint64]uint64, roots map[uint64]bool) uint64 {
	for range 256 { // pathways are short; a cycle (a hash collision) ends here
		if roots[hash] {
			return hash
		}
		parent, ok := parents[hash]
		if !ok || parent == 0 {
			return 0
		}
		hash = parent
	}
	return 0
}

// count sums the series' counts of bin.
func count(series []pathwaytopic.CohortSeries, bin int64) uint64 {
	var n uint64
	for _, s := range series {
		if i, ok := slices.BinarySearchFunc(s.Bins, bin, func(c pathway.CohortCount, b int64) int { return cmp.Compare(c.Bin, b) }); ok {
			n += s.Bins[i].Count
		}
	}
	return n
}

// ends counts bin's requests that entered and that ended, and of these
// the expired and the dead-lettered. A pathway's ended requests are at
// most its entered ones: a process that stopped publishing (paused, hung)
// after it counted requests in, while the next stages went on ending
// them, would otherwise have their ends hide as many unfinished requests
// of other pathways in the cohort. Ends with no root in the view (a gap)
// may cover what is left unfinished, as before.
func (p *places) ends(bin int64) (entered, ended, expired, dead uint64) {
	var orphans uint64
	for root, e := range p.pathways {
		in, out, exp, dl := e.count(bin)
		expired, dead = expired+exp, dead+dl
		if root == 0 {
			orphans = out
			continue
		}
		entered += in
		ended += min(in, out)
	}
	return entered, ended + min(orphans, entered-ended), expired, dead
}

// count counts bin's requests of one pathway: entered, ended, and of
// these expired and dead-lettered.
func (e *ends) count(bin int64) (entered, ended, expired, dead uint64) {
	results := count(e.results, bin)
	for _, rs := range e.readers {
		results = max(results, count(rs, bin))
	}
	expired, dead = count(e.expired, bin), count(e.dead, bin)
	return count(e.entered, bin), results + expired + dead, expired, dead
}

// waiting places bin's unfinished requests: at each checkpoint, the
// records that passed it and not the checkpoints after it, at most
// unfinished in all, most first.
func (p *places) waiting(bin int64, unfinished uint64) []Waiting {
	at := map[Waiting]uint64{}
	for _, s := range p.inner {
		n := count([]pathwaytopic.CohortSeries{s}, bin)
		next := count(p.children[s.Hash], bin)
		if n <= next {
			continue
		}
		w := newWaiting(s.Checkpoint.Topic, p.readerOf(s.Checkpoint.Topic), true)
		if s.Checkpoint.Direction == pathway.In {
			w = newWaiting(s.Checkpoint.Topic, cmp.Or(s.Checkpoint.Group, s.Checkpoint.Service), false)
		}
		at[w] += n - next
	}
	out := make([]Waiting, 0, len(at))
	for w, n := range at {
		w.Count = n
		out = append(out, w)
	}
	sortWaiting(out)
	// Lost counts (a process killed before it published) can make more
	// records look waiting than are unfinished: the most first, up to
	// unfinished.
	left := unfinished
	for i := range out {
		out[i].Count = min(out[i].Count, left)
		left -= out[i].Count
		if left == 0 {
			return out[:i+1]
		}
	}
	return out
}

// readerOf returns the group of the stage reading topic, "" for none.
func (p *places) readerOf(topic string) string {
	for _, s := range p.topo.Stages {
		if s.Input == topic {
			return s.Group
		}
	}
	return ""
}
