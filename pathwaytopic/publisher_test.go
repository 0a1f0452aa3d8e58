// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/pathway"
)

// fakeSource is a Source whose series the test records into.
type fakeSource struct {
	mu     sync.Mutex
	series []*fakeSeries
}

type fakeSeries struct {
	cp           pathway.Checkpoint
	hash, parent uint64
	edge, origin pathway.Histogram
}

func (f *fakeSource) add(cp pathway.Checkpoint, hash, parent uint64) *fakeSeries {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &fakeSeries{cp: cp, hash: hash, parent: parent}
	f.series = append(f.series, s)
	return s
}

func (s *fakeSeries) record(n int, edge, origin time.Duration) {
	for range n {
		s.edge.Record(edge, trace.SpanContext{}, 0)
		s.origin.Record(origin, trace.SpanContext{}, 0)
	}
}

func (f *fakeSource) Pathways() []kafkatrace.PathwayStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []kafkatrace.PathwayStats
	for _, s := range f.series {
		out = append(out, kafkatrace.PathwayStats{Checkpoint: s.cp, Hash: s.hash, Parent: s.parent, Edge: s.edge.Snapshot(), Origin: s.origin.Snapshot()})
	}
	return out
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClient(t *testing.T, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func newReader(t *testing.T, addr string, opts ...Option) *Reader {
	t.Helper()
	r, err := NewReader([]kgo.Opt{kgo.SeedBrokers(addr)}, append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func catchUp(t *testing.T, r *Reader) View {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := r.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	return r.View()
}

func TestEnsureTopicCompacts(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	cl := newClient(t, b.Addr())
	for range 2 { // the second time, it exists
		if err := EnsureTopic(t.Context(), cl, -1, DefaultTopic); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	details, err := adm.ListTopics(t.Context(), DefaultTopic)
	if err != nil {
		t.Fatal(err)
	}
	if d := details[DefaultTopic]; d.Err != nil || len(d.Partitions) != 1 {
		t.Fatalf("topic %+v", d)
	}
	cfgs, err := adm.DescribeTopicConfigs(t.Context(), DefaultTopic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfgs.On(DefaultTopic, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range rc.Configs {
		got[c.Key] = c.MaybeValue()
	}
	for k, v := range TopicConfigs() {
		if got[k] != *v {
			t.Errorf("%s = %q, want %q", k, got[k], *v)
		}
	}
	if got["cleanup.policy"] != "compact,delete" || got["retention.ms"] != "3600000" {
		t.Errorf("configs %v", got)
	}
}

// TestPublishAndRead: two processes publish windows of deltas; the reader
// keeps each one's newest window, merges them, skips hostile records and
// forgets tombstoned instances.
func TestPublishAndRead(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	cl := newClient(t, b.Addr())
	if err := EnsureTopic(t.Context(), cl, -1, DefaultTopic); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: t0}
	gwCP := cp("kretrieve-gateway", "", "retrieval.requests", pathway.Out)
	inCP := cp("kretrieve-retrieval", "retrieval", "retrieval.requests", pathway.In)

	gwSrc, wkSrc := &fakeSource{}, &fakeSource{}
	gw := gwSrc.add(gwCP, 0xa, 0)
	wk := wkSrc.add(inCP, 0xb, 0xa)
	idle := wkSrc.add(cp("kretrieve-retrieval", "retrieval", "retrieval.candidates", pathway.Out), 0xc, 0xb)
	gwPub, err := NewPublisher(cl, gwSrc, WithService("kretrieve-gateway"), WithInstance("gw-1"), withClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	wkPub, err := NewPublisher(cl, wkSrc, WithService("kretrieve-retrieval"), WithInterval(5*time.Second), withClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	if id := wkPub.Instance(); len(id) < len("kretrieve-retrieval@") || id[:len("kretrieve-retrieval@")] != "kretrieve-retrieval@" {
		t.Fatalf("instance id %q", id)
	}

	// The idle series has a record in the worker's first window and none
	// after: the later windows have it with its total.
	idle.record(1, time.Millisecond, time.Millisecond)
	clk.advance(10 * time.Second)
	if err := wkPub.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Then windows of 10 s with 100 records.
	gw.record(100, time.Millisecond, time.Millisecond)
	wk.record(100, 2*time.Millisecond, 3*time.Millisecond)
	clk.advance(10 * time.Second)
	for _, p := range []*Publisher{gwPub, wkPub} {
		if err := p.Publish(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// Second windows: 5 s, 10 more records, slower.
	gw.record(10, time.Millisecond, time.Millisecond)
	wk.record(10, 200*time.Millisecond, 300*time.Millisecond)
	clk.advance(5 * time.Second)
	for _, p := range []*Publisher{gwPub, wkPub} {
		if err := p.Publish(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// A hostile record, and one from another version.
	if err := cl.ProduceSync(t.Context(),
		&kgo.Record{Topic: DefaultTopic, Key: []byte("evil"), Value: []byte(`{"v":1,"instance":"evil","service":"\u001b[2J"}`)},
		&kgo.Record{Topic: DefaultTopic, Key: []byte("future"), Value: []byte(`{"v":2}`)},
	).FirstErr(); err != nil {
		t.Fatal(err)
	}

	r := newReader(t, b.Addr(), withClock(clk.now))
	v := catchUp(t, r)
	if len(v.Instances) != 2 || v.Skipped[ReasonWindow] != 1 || v.Skipped[ReasonVersion] != 1 {
		t.Fatalf("instances %+v skipped %v", v.Instances, v.Skipped)
	}
	if len(v.Rows) != 3 {
		t.Fatalf("rows %+v", v.Rows)
	}
	gwRow, wkRow, idleRow := v.Rows[0], v.Rows[1], v.Rows[2]
	if idleRow.Depth != 2 || idleRow.Count != 0 || idleRow.Total != 1 || idleRow.Rate != 0 || idleRow.Latency.Count != 0 {
		t.Errorf("idle row %+v", idleRow)
	}
	if gwRow.Checkpoint != gwCP || gwRow.Depth != 0 || gwRow.Count != 10 || gwRow.Total != 110 || gwRow.Rate != 2 {
		t.Errorf("gateway row %+v", gwRow)
	}
	// Only the newest window: 10 records at 200 ms.
	if wkRow.Checkpoint != inCP || wkRow.Depth != 1 || wkRow.Count != 10 || wkRow.Total != 110 || wkRow.Rate != 2 ||
		wkRow.Latency.Quantile(0.5) < 190*time.Millisecond || wkRow.Origin.Quantile(0.5) < 290*time.Millisecond {
		t.Errorf("retrieval row %+v", wkRow)
	}

	// The reader goes on from where it was: a third window, then the
	// gateway's instance is tombstoned.
	wk.record(4, time.Millisecond, time.Millisecond)
	clk.advance(2 * time.Second)
	if err := wkPub.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: DefaultTopic, Key: []byte("gw-1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	v = catchUp(t, r)
	if len(v.Instances) != 1 || len(v.Rows) != 2 || v.Rows[0].Count != 4 || v.Rows[0].Total != 114 || v.Rows[0].Rate != 2 || v.Skipped[ReasonWindow] != 1 {
		t.Fatalf("after the tombstone: instances %+v rows %+v skipped %v", v.Instances, v.Rows, v.Skipped)
	}

	// Silent for longer than 3 intervals (15 s): stale.
	clk.advance(16 * time.Second)
	v = r.View()
	if len(v.Rows) != 0 || len(v.Instances) != 1 || !v.Instances[0].Stale {
		t.Fatalf("stale: instances %+v rows %+v", v.Instances, v.Rows)
	}
}

// TestFailedPublishJoinsTheNextWindow: a window that could not be
// published is part of the next one.
func TestFailedPublishJoinsTheNextWindow(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	cl := newClient(t, b.Addr())
	if err := EnsureTopic(t.Context(), cl, -1, DefaultTopic); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: t0}
	src := &fakeSource{}
	s := src.add(cp("s", "", "t", pathway.Out), 1, 0)
	p, err := NewPublisher(cl, src, WithInstance("i"), withClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	s.record(3, time.Millisecond, time.Millisecond)
	clk.advance(time.Second)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Publish(cancelled); err == nil {
		t.Fatal("published with a cancelled context")
	}
	s.record(2, time.Millisecond, time.Millisecond)
	clk.advance(time.Second)
	if err := p.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	v := catchUp(t, newReader(t, b.Addr(), withClock(clk.now)))
	if len(v.Instances) != 1 || !v.Instances[0].Start.Equal(t0) || len(v.Rows) != 1 || v.Rows[0].Count != 5 || v.Rows[0].Rate != 2.5 {
		t.Fatalf("instances %+v rows %+v", v.Instances, v.Rows)
	}
}

// TestRunPublishesAtTheEnd: Run's last window holds what was measured
// before its context ended, however long the interval.
func TestRunPublishesAtTheEnd(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	cl := newClient(t, b.Addr())
	if err := EnsureTopic(t.Context(), cl, -1, DefaultTopic); err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{}
	s := src.add(cp("s", "", "t", pathway.Out), 1, 0)
	p, err := NewPublisher(cl, src, WithInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	s.record(7, time.Millisecond, time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	v := catchUp(t, newReader(t, b.Addr()))
	if len(v.Rows) != 1 || v.Rows[0].Count != 7 || v.Rows[0].Total != 7 {
		t.Fatalf("rows %+v", v.Rows)
	}
}

func TestReaderWithoutTopic(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	r := newReader(t, b.Addr(), WithTopic("kretrieve.pathways.missing"))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := r.CatchUp(ctx); !errors.Is(err, ErrNoTopic) {
		t.Fatalf("err = %v, want ErrNoTopic", err)
	}
}

func TestNewPublisherValidates(t *testing.T) {
	cl := newClient(t, "127.0.0.1:1")
	for _, opts := range [][]Option{
		{WithInterval(time.Millisecond)},
		{WithInterval(2 * time.Hour)},
		{WithInstance("a\x1b[2Jb")},
		{WithService("svc\n")},
	} {
		if _, err := NewPublisher(cl, &fakeSource{}, opts...); err == nil {
			t.Errorf("options %v accepted", opts)
		}
	}
	if _, err := NewPublisher(nil, &fakeSource{}); err == nil {
		t.Error("no client accepted")
	}
}

// TestPublishedExemplarsAreBounded: a window of kafkatrace's default bound
// of series whose histograms hold an exemplar in every power of two keeps
// the newest MaxExemplars per histogram, MaxWindowExemplars in all, those
// of the busiest series first.
func TestPublishedExemplarsAreBounded(t *testing.T) {
	w := testWindow()
	w.Series = nil
	var octaves []time.Duration
	for d := time.Microsecond; d < time.Hour; d *= 2 {
		octaves = append(octaves, d)
	}
	for i := range kafkatrace.DefaultMaxPathways {
		s := Series{Checkpoint: cp("kretrieve-retrieval", "retrieval", "retrieval.requests", pathway.In), Hash: uint64(i + 1), Parent: 0xfeed,
			Edge: exemplified(0, octaves...), Origin: exemplified(100, octaves...)}
		// Busier series later: the bound must pick them, not the first.
		for range i {
			s.Edge.Merge(snapshot(time.Millisecond))
		}
		s.Total = s.Edge.Count
		w.Series = append(w.Series, s)
	}
	plain := w
	plain.Series = slices.Clone(w.Series)
	for i := range plain.Series {
		plain.Series[i].Edge.Exemplars, plain.Series[i].Origin.Exemplars = nil, nil
	}
	if _, err := w.Encode(); err == nil {
		t.Fatal("a window with every exemplar encodes")
	}
	boundExemplars(w.Series)
	total := 0
	for i, s := range w.Series {
		for _, h := range []pathway.Snapshot{s.Edge, s.Origin} {
			total += len(h.Exemplars)
			if len(h.Exemplars) > MaxExemplars {
				t.Fatalf("series %d: %d exemplars", i, len(h.Exemplars))
			}
			if n := len(h.Exemplars); n > 0 && h.Exemplars[n-1].Value != octaves[len(octaves)-1] {
				t.Errorf("series %d: the newest exemplar %v is not kept", i, h.Exemplars[n-1])
			}
		}
		busiest := i >= len(w.Series)-MaxWindowExemplars/(2*MaxExemplars)
		if busiest != (len(s.Edge.Exemplars) == MaxExemplars) {
			t.Errorf("series %d of %d: %d exemplars", i, len(w.Series), len(s.Edge.Exemplars))
		}
	}
	if total != MaxWindowExemplars {
		t.Errorf("%d exemplars in the window, want %d", total, MaxWindowExemplars)
	}
	b, err := w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	pb, err := plain.Encode()
	if err != nil {
		t.Fatal(err)
	}
	perExemplar := (len(b) - len(pb)) / total
	t.Logf("%d series: %d bytes without exemplars, %d with %d (%d bytes each)", len(w.Series), len(pb), len(b), total, perExemplar)
	if perExemplar > 150 {
		t.Errorf("%d bytes per exemplar: MaxWindowExemplars's doc says at most 150", perExemplar)
	}
}
