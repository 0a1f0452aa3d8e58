// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/pathway"
)

// newTopic starts a broker with the aggregate topic and returns its
// address and a client.
func newTopic(t *testing.T) (string, *kgo.Client) {
	t.Helper()
	b := brokertest.NewBroker(t, 1)
	cl := newClient(t, b.Addr())
	if err := EnsureTopic(t.Context(), cl, -1, DefaultTopic); err != nil {
		t.Fatal(err)
	}
	return b.Addr(), cl
}

// TestSkewedWriterIsNotStale: a worker whose clock is 40 s behind the
// reader's keeps publishing; the reader, which saw its windows arrive,
// does not call it stale (issue 25, item 4).
func TestSkewedWriterIsNotStale(t *testing.T) {
	addr, cl := newTopic(t)
	readerClock := &clock{t: t0}
	writerClock := &clock{t: t0.Add(-40 * time.Second)}
	src := &fakeSource{}
	s := src.add(cp("kretrieve-retrieval", "retrieval", "retrieval.requests", pathway.In), 2, 1)
	p, err := NewPublisher(cl, src, WithInstance("behind"), WithInterval(10*time.Second), withClock(writerClock.now))
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewPublisher(cl, &fakeSource{}, WithInstance("other"), withClock(readerClock.now))
	if err != nil {
		t.Fatal(err)
	}
	r := newReader(t, addr, withClock(readerClock.now))
	for range 3 {
		s.record(10, time.Millisecond, time.Millisecond)
		writerClock.advance(10 * time.Second)
		readerClock.advance(10 * time.Second)
		for _, p := range []*Publisher{p, other} {
			if err := p.Publish(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		catchUp(t, r)
	}
	v := r.View()
	for _, in := range v.Instances {
		if in.Stale || in.Late {
			t.Errorf("instance %s: stale %v late %v, though its window arrived just now", in.Instance, in.Stale, in.Late)
		}
	}
	if len(v.Rows) != 1 || v.Rows[0].Count != 10 {
		t.Errorf("rows %+v, want the behind worker's 10 records", v.Rows)
	}
	// Silent for longer than 3 intervals on the reader's clock: stale.
	readerClock.advance(31 * time.Second)
	if v := r.View(); len(v.Rows) != 0 {
		t.Errorf("rows %+v after 31 s of silence", v.Rows)
	}
}

// TestLateAndFinalWindowsAreMarked: a window whose next one is overdue,
// and the last window of a stopped process, are marked as not current
// (issue 25, item 5).
func TestLateAndFinalWindowsAreMarked(t *testing.T) {
	addr, cl := newTopic(t)
	clk := &clock{t: t0}
	src := &fakeSource{}
	s := src.add(cp("s", "", "t", pathway.Out), 1, 0)
	p, err := NewPublisher(cl, src, WithInstance("cut-off"), WithInterval(10*time.Second), withClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	s.record(10, time.Millisecond, time.Millisecond)
	clk.advance(10 * time.Second)
	if err := p.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, addr, withClock(clk.now))
	v := catchUp(t, r)
	if len(v.Instances) != 1 || v.Instances[0].Late || len(v.Rows) != 1 || v.Rows[0].Late != 0 {
		t.Fatalf("fresh window: instances %+v rows %+v", v.Instances, v.Rows)
	}
	// No window for an interval plus MinStale and a bit: late, not stale.
	clk.advance(10*time.Second + MinStale + time.Second)
	v = r.View()
	if len(v.Instances) != 1 || !v.Instances[0].Late || v.Instances[0].Stale || len(v.Rows) != 1 || v.Rows[0].Late != 1 {
		t.Fatalf("overdue window: instances %+v rows %+v", v.Instances, v.Rows)
	}

	// A process that stops publishes a final window, marked so at once.
	fin, err := NewPublisher(cl, src, WithInstance("stopped"), withClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := fin.Run(ctx); err != nil {
		t.Fatal(err)
	}
	v = catchUp(t, r)
	if len(v.Instances) != 2 || !v.Instances[1].Final || !v.Instances[1].Late {
		t.Fatalf("final window: instances %+v", v.Instances)
	}
}

// hostileRecord returns a record of a window of instance id with the given
// times and one series counting count records.
func hostileRecord(t *testing.T, id string, start, end time.Time, count uint64, series int) *kgo.Record {
	t.Helper()
	var ss []string
	for i := range series {
		ss = append(ss, fmt.Sprintf(`{"service":"s","topic":"t","direction":"out","hash":"%016x","parent":"0000000000000000","total":%d,`+
			`"edge":{"count":%d,"sum_ns":0,"zero_count":%d,"offset":0},"origin":{"count":0,"sum_ns":0,"offset":0}}`, i+1, count, count, count))
	}
	w := fmt.Sprintf(`{"v":1,"service":"s","instance":%q,"start":%q,"end":%q,"interval_ns":10000000000,"series":[%s]}`,
		id, start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano), strings.Join(ss, ","))
	if !json.Valid([]byte(w)) {
		t.Fatalf("invalid JSON %s", w)
	}
	return &kgo.Record{Topic: DefaultTopic, Key: []byte(id), Value: []byte(w)}
}

// TestHostileWindows: a window from the future keyed with a real
// instance id does not hide it; an implausible rate is refused; many
// hostile windows do not grow the reader without bound (issue 25, item 7).
func TestHostileWindows(t *testing.T) {
	addr, cl := newTopic(t)
	clk := &clock{t: t0}
	src := &fakeSource{}
	s := src.add(cp("s", "", "t", pathway.Out), 1, 0)
	p, err := NewPublisher(cl, src, WithInstance("real"), withClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	year2199 := time.Date(2199, 1, 1, 0, 0, 0, 0, time.UTC)
	produce := func(recs ...*kgo.Record) {
		t.Helper()
		if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(hostileRecord(t, "real", year2199.Add(-time.Second), year2199, 1e6, 1))
	s.record(20, time.Millisecond, time.Millisecond)
	clk.advance(10 * time.Second)
	if err := p.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A window of now, a nanosecond long, claiming 2^40 records.
	produce(hostileRecord(t, "fast", clk.now().Add(-time.Nanosecond), clk.now(), 1<<40, 1))
	r := newReader(t, addr, withClock(clk.now), withMaxSeries(8))
	v := catchUp(t, r)
	if v.Skipped[ReasonFuture] != 1 || v.Skipped[ReasonRate] != 1 {
		t.Errorf("skipped %v, want one %q and one %q", v.Skipped, ReasonFuture, ReasonRate)
	}
	if len(v.Instances) != 1 || v.Instances[0].Instance != "real" || !v.Instances[0].End.Equal(clk.now()) {
		t.Fatalf("instances %+v, want the real one's window", v.Instances)
	}
	if len(v.Rows) != 1 || v.Rows[0].Count != 20 || v.Rows[0].Rate != 2 {
		t.Fatalf("rows %+v, want the real 20 records in 10 s", v.Rows)
	}

	// A future window published after the real one does not hide it
	// either; the next real window replaces a hostile one of its key.
	produce(hostileRecord(t, "real", year2199.Add(-time.Second), year2199, 1e6, 1),
		hostileRecord(t, "real", clk.now().Add(-time.Second), clk.now(), 5, 1))
	s.record(30, time.Millisecond, time.Millisecond)
	clk.advance(10 * time.Second)
	if err := p.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	v = catchUp(t, r)
	if len(v.Rows) != 1 || v.Rows[0].Count != 30 || v.Skipped[ReasonFuture] != 2 {
		t.Fatalf("rows %+v skipped %v, want the real 30 records", v.Rows, v.Skipped)
	}

	// Windows of many series, each plausible: the reader holds at most
	// its bound of series, and says what it skipped.
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, hostileRecord(t, fmt.Sprintf("flood-%d", i), clk.now().Add(-time.Second), clk.now(), 1, 3))
	}
	produce(recs...)
	v = catchUp(t, r)
	held := 0
	for _, in := range v.Instances {
		held += in.Series
	}
	if held > 8 || v.Skipped[ReasonBudget] == 0 {
		t.Errorf("reader holds %d series (bound 8), skipped %v", held, v.Skipped)
	}
}
