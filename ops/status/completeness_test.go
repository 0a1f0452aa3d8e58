// SPDX-License-Identifier: Apache-2.0

package status

import (
	"reflect"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

// TestCompletenessJudgesCohorts builds the origin-time counts of a
// pipeline whose enrichment stalled in the second cohort: every cohort
// judged says how many entered and ended, the stalled one how many are
// unfinished and where they wait, and the newest cohort is not judged yet.
func TestCompletenessJudgesCohorts(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 1, 0, 0, time.UTC)
	b0 := now.Add(-60 * time.Second).Unix() // 10:00:00
	b1, b2, b3 := b0+5, b0+10, now.Unix()-5
	cs := func(dir pathway.Direction, service, group, topic string, hash, parent uint64, counts map[int64]uint64) pathwaytopic.CohortSeries {
		s := pathwaytopic.CohortSeries{Checkpoint: pathway.Checkpoint{Service: service, Group: group, Topic: topic, Direction: dir}, Hash: hash, Parent: parent}
		for _, b := range []int64{b0, b1, b2, b3} {
			if n := counts[b]; n > 0 {
				s.Bins = append(s.Bins, pathway.CohortCount{Bin: b, Count: n})
			}
		}
		return s
	}
	type m = map[int64]uint64
	req, cand, res := topo.Topics()[0], topo.Topics()[1], topo.Topics()[2]
	v := pathwaytopic.View{CohortsSince: b0 - 300, Cohorts: []pathwaytopic.CohortSeries{
		// Through the gateway.
		cs(pathway.Out, "gw", "", req, 1, 0, m{b0: 10, b1: 10, b2: 5, b3: 3}),
		cs(pathway.In, "r", "retrieval", req, 2, 1, m{b0: 10, b1: 10, b2: 5}),
		cs(pathway.Out, "r", "retrieval", cand, 3, 2, m{b0: 9, b1: 10, b2: 5}),
		cs(pathway.Out, "r", "retrieval", req+".dlq", 4, 2, m{b0: 1}),
		cs(pathway.In, "e", "enrichment", cand, 5, 3, m{b0: 9, b1: 4, b2: 5}),
		cs(pathway.Out, "e", "enrichment", res, 6, 5, m{b0: 9, b1: 4}),
		cs(pathway.Expired, "e", "enrichment", cand, 12, 5, m{b2: 5}),
		// The gateway read one result fewer than were written (it had
		// not published it): the larger count stands.
		cs(pathway.In, "gw", "", res, 7, 6, m{b0: 9, b1: 3}),
		// A foreign producer's records start their pathway at retrieval.
		cs(pathway.In, "r", "retrieval", req, 8, 0, m{b1: 2}),
		cs(pathway.Out, "r", "retrieval", cand, 9, 8, m{b1: 2}),
		cs(pathway.In, "e", "enrichment", cand, 10, 9, m{b1: 2}),
		cs(pathway.Out, "e", "enrichment", res, 11, 10, m{b1: 1}),
		// The documents topic is no part of it.
		cs(pathway.Out, "ingest", "", "retrieval.documents", 20, 0, m{b1: 50}),
	}}
	c := completenessOf(v, topo, now, 30*time.Second)
	if c.Entered != 27 || c.Ended != 20 || c.Unfinished != 7 || c.Expired != 5 || c.DeadLettered != 1 {
		t.Errorf("entered %d ended %d unfinished %d expired %d dead %d, want 27 20 7 5 1", c.Entered, c.Ended, c.Unfinished, c.Expired, c.DeadLettered)
	}
	want := []Waiting{
		{Where: "retrieval.candidates → enrichment", Topic: cand, Group: "enrichment", Queued: true, Count: 6},
		{Where: "in enrichment", Topic: cand, Group: "enrichment", Queued: false, Count: 1},
	}
	if len(c.Cohorts) != 1 || !c.Cohorts[0].Origin.Equal(time.Unix(b1, 0)) || c.Cohorts[0].Unfinished != 7 || !reflect.DeepEqual(c.Cohorts[0].Waiting, want) {
		t.Errorf("cohorts %+v, want the one of %s with 7 unfinished waiting at %+v", c.Cohorts, time.Unix(b1, 0).UTC(), want)
	}
	if !reflect.DeepEqual(c.Waiting, want) {
		t.Errorf("waiting %+v", c.Waiting)
	}
	// Judged: the cohorts that ended 30 s before now, up to 10:00:30.
	if want := now.Add(-30 * time.Second); !c.Until.Equal(want) {
		t.Errorf("judged until %s, want %s", c.Until, want)
	}
}

// TestCompletenessCapsWaitingAtUnfinished: counts lost with a killed
// process can make more records look waiting than are unfinished; the
// places listed never add up to more.
func TestCompletenessCapsWaitingAtUnfinished(t *testing.T) {
	p := newPlaces(topo, []pathwaytopic.CohortSeries{
		{Checkpoint: pathway.Checkpoint{Topic: topo.Topics()[0], Direction: pathway.Out}, Hash: 1, Bins: []pathway.CohortCount{{Bin: 100, Count: 8}}},
		{Checkpoint: pathway.Checkpoint{Topic: topo.Topics()[1], Direction: pathway.Out, Group: "retrieval"}, Hash: 3, Parent: 2, Bins: []pathway.CohortCount{{Bin: 100, Count: 5}}},
	})
	got := p.waiting(100, 10)
	want := []Waiting{{Where: "retrieval.requests → retrieval", Topic: topo.Topics()[0], Group: "retrieval", Queued: true, Count: 8},
		{Where: "retrieval.candidates → enrichment", Topic: topo.Topics()[1], Group: "enrichment", Queued: true, Count: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("waiting %+v, want %+v", got, want)
	}
}

// TestCompletenessCountsProducersWithoutWindows: a producer that publishes
// no pathway windows (its records carry a pathway header, its send is not
// in the view) has its requests enter where a worker first reads them, so
// their results do not hide the unfinished requests of their cohort: six
// searches wait behind a paused retrieval worker while five of the
// producer's requests, read before the pause, were answered.
func TestCompletenessCountsProducersWithoutWindows(t *testing.T) {
	// The load's records: its send (hash 99) is in no window.
	checkSearchesWaiting(t, load{parent: 99, read: 5, answered: 5}, 11, 5)
}

// TestCompletenessEndsNoMoreThanEntered: a retrieval worker stopped
// (SIGSTOP, a hung host) after it read records without a pathway header
// (their pathway starts at its read) and before it published that count,
// while enrichment went on answering what it had written: those results
// outnumber their published entries, and must not hide the searches
// waiting behind the stopped worker in the same cohort. Seen in the
// container tier: 6 searches waiting, 1 or none shown unfinished.
func TestCompletenessEndsNoMoreThanEntered(t *testing.T) {
	// The headerless load: read 48, the last window said 47.
	checkSearchesWaiting(t, load{read: 47, answered: 48}, 53, 47)
}

// load is a load's pathway beside the gateway's searches: its records'
// first read (parent: its producer's send, 0 for none), how many the
// retrieval worker's windows say it read, and how many were answered.
type load struct {
	parent, read, answered uint64
}

// checkSearchesWaiting judges a cohort of 6 searches waiting behind a
// paused retrieval worker beside ld: the completeness must count entered
// and ended, and the 6 searches unfinished at retrieval's edge.
func checkSearchesWaiting(t *testing.T, ld load, entered, ended uint64) {
	t.Helper()
	now := time.Date(2026, 11, 28, 10, 1, 0, 0, time.UTC)
	bin := now.Add(-60 * time.Second).Unix()
	req, cand, res := topo.Topics()[0], topo.Topics()[1], topo.Topics()[2]
	cs := func(dir pathway.Direction, group, topic string, hash, parent, n uint64) pathwaytopic.CohortSeries {
		return pathwaytopic.CohortSeries{Checkpoint: pathway.Checkpoint{Service: group, Group: group, Topic: topic, Direction: dir},
			Hash: hash, Parent: parent, Bins: []pathway.CohortCount{{Bin: bin, Count: n}}}
	}
	v := pathwaytopic.View{CohortsSince: bin - 300, Cohorts: []pathwaytopic.CohortSeries{
		cs(pathway.Out, "", req, 1, 0, 6), // the gateway's searches, not read yet
		cs(pathway.In, "retrieval", req, 30, ld.parent, ld.read),
		cs(pathway.Out, "retrieval", cand, 31, 30, ld.read),
		cs(pathway.In, "enrichment", cand, 32, 31, ld.answered),
		cs(pathway.Out, "enrichment", res, 33, 32, ld.answered),
	}}
	c := completenessOf(v, topo, now, 30*time.Second)
	if c.Entered != entered || c.Ended != ended || c.Unfinished != 6 {
		t.Errorf("entered %d ended %d unfinished %d, want %d %d 6", c.Entered, c.Ended, c.Unfinished, entered, ended)
	}
	want := []Waiting{{Where: "retrieval.requests → retrieval", Topic: req, Group: "retrieval", Queued: true, Count: 6}}
	if !reflect.DeepEqual(c.Waiting, want) {
		t.Errorf("waiting %+v, want %+v", c.Waiting, want)
	}
}
