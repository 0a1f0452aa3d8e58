// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/messages"
)

// fakeTarget answers every request after delay, completed with the same
// stage timings, and records the most requests it saw in flight at once.
type fakeTarget struct {
	delay    time.Duration
	inFlight atomic.Int64
	peak     atomic.Int64

	mu       sync.Mutex
	queries  []string
	started  bool
	finished bool
}

func (f *fakeTarget) name() string { return "fake" }

func (f *fakeTarget) start(context.Context) { f.started = true }

func (f *fakeTarget) do(_ context.Context, query string) result {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	f.mu.Lock()
	f.queries = append(f.queries, query)
	f.mu.Unlock()
	time.Sleep(f.delay)
	return result{outcome: outcomeCompleted, latency: f.delay, timings: &messages.Timings{Stages: []messages.StageTiming{
		{Stage: messages.StageRetrieval, QueueMS: 1, WorkMS: 2},
		{Stage: messages.StageEnrichment, QueueMS: 3, WorkMS: 4},
	}}}
}

func (f *fakeTarget) finish(_ context.Context, rep *Report) error {
	f.finished = true
	rep.Duplicates = 7
	return nil
}

// TestRunClosedLoop: a closed loop sends Requests, the queries in turn,
// never more than InFlight at once, and reports every outcome and stage.
func TestRunClosedLoop(t *testing.T) {
	f := &fakeTarget{delay: 2 * time.Millisecond}
	rep, err := Run(t.Context(), Config{InFlight: 4, Requests: 40, Queries: []string{"a", "b"}}, f)
	if err != nil {
		t.Fatal(err)
	}
	if !f.started || !f.finished || rep.Duplicates != 7 || rep.Target != "fake" || rep.Mode != "closed loop at 4 in flight" {
		t.Fatalf("started %v finished %v report %+v", f.started, f.finished, rep)
	}
	if rep.Sent != 40 || rep.Completed != 40 || rep.Failed+rep.TimedOut != 0 || f.peak.Load() > 4 {
		t.Fatalf("sent %d completed %d, peak in flight %d", rep.Sent, rep.Completed, f.peak.Load())
	}
	if a := len(slices.DeleteFunc(f.queries, func(q string) bool { return q != "a" })); a != 20 {
		t.Fatalf("query a sent %d times, want 20", a)
	}
	keys := StageKeys([]string{"retrieval", "enrichment"})
	if !slices.Equal(keys, []string{"retrieval_queue", "retrieval", "enrichment_queue", "enrichment"}) || len(rep.Stages) != 4 {
		t.Fatalf("stages %v %v", keys, rep.Stages)
	}
	for i, st := range keys {
		if got := rep.Stages[st].P50; got < float64(i+1)*0.99 || got > float64(i+1)*1.01 {
			t.Errorf("%s p50 %.3f ms, want %d", st, got, i+1)
		}
	}
	if rep.EndToEndMS.P50 < 1.9 || rep.ThroughputPS <= 0 {
		t.Fatalf("end to end %+v throughput %.1f", rep.EndToEndMS, rep.ThroughputPS)
	}
}

// TestPhaseRecordsEveryStage: a result's stages beyond the default ones get
// keys of the same form, "<stage>_queue" and "<stage>", also when phases
// are added up.
func TestPhaseRecordsEveryStage(t *testing.T) {
	p := newPhase()
	p.record(result{outcome: outcomeCompleted, latency: time.Millisecond, timings: &messages.Timings{Stages: []messages.StageTiming{
		{Stage: messages.StageRetrieval, QueueMS: 1, WorkMS: 2},
		{Stage: "rerank", QueueMS: 5, WorkMS: 6},
		{Stage: messages.StageEnrichment, QueueMS: 3, WorkMS: 4},
	}}})
	total := newPhase()
	total.add(p)
	var rep Report
	rep.Stages = map[string]Latency{}
	total.fill(&rep)
	want := map[string]float64{"retrieval_queue": 1, "retrieval": 2, "rerank_queue": 5, "rerank": 6, "enrichment_queue": 3, "enrichment": 4}
	if len(rep.Stages) != len(want) {
		t.Fatalf("stages %v, want the keys of %v", rep.Stages, want)
	}
	for st, ms := range want {
		if got := rep.Stages[st].P50; got < ms*0.99 || got > ms*1.01 {
			t.Errorf("%s p50 %.3f ms, want %.0f", st, got, ms)
		}
	}
}

// TestRunOpenLoop: an open loop sends request i no earlier than i/Rate
// after the first.
func TestRunOpenLoop(t *testing.T) {
	start := time.Now()
	rep, err := Run(t.Context(), Config{Rate: 100, InFlight: 8, Requests: 11, Queries: []string{"q"}}, &fakeTarget{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 100*time.Millisecond || rep.Completed != 11 || rep.Mode != "open loop at 100/s" {
		t.Fatalf("took %v, report %+v", took, rep)
	}
}

// TestRunSweep: a sweep warms up at the first rate, uncounted, then adds a
// step per rate; the totals are the steps'.
func TestRunSweep(t *testing.T) {
	rep, err := Run(t.Context(), Config{Sweep: []int{200, 400}, InFlight: 8, Requests: 10, Queries: []string{"q"}}, &fakeTarget{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sweep) != 2 || rep.WarmupRequests != 10 || rep.Sent != 20 || rep.Completed != 20 || rep.Mode != "sweep, open loop at 200, 400 req/s" {
		t.Fatalf("report %+v", rep)
	}
	for i, s := range rep.Sweep {
		if s.OfferedPS != []float64{200, 400}[i] || s.Sent != 10 || s.Completed != 10 || s.AchievedPS <= 0 {
			t.Errorf("step %d: %+v", i, s)
		}
	}
}

// failingTarget fails every other request and times out the rest.
type failingTarget struct{ n atomic.Int64 }

func (*failingTarget) name() string                          { return "failing" }
func (*failingTarget) start(context.Context)                 {}
func (*failingTarget) finish(context.Context, *Report) error { return nil }
func (f *failingTarget) do(context.Context, string) result {
	if f.n.Add(1)%2 == 0 {
		return result{outcome: outcomeTimeout}
	}
	return result{outcome: outcomeFailed, transport: true}
}

// TestProgressCountsFailures: failed and timed-out requests are counted as
// failures on the progress line, not as completed, and in the report's
// failure rate.
func TestProgressCountsFailures(t *testing.T) {
	var progress strings.Builder
	rep, err := Run(t.Context(), Config{InFlight: 2, Requests: 10, Queries: []string{"q"}, Progress: &progress}, &failingTarget{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Completed != 0 || rep.Failures() != 10 || rep.FailureRate() != 1 {
		t.Fatalf("completed %d failures %d rate %v", rep.Completed, rep.Failures(), rep.FailureRate())
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "sent 10 completed 0 failed 10 ") {
		t.Fatalf("last progress line %q", last)
	}
	if (Report{}).FailureRate() != 0 {
		t.Fatal("nothing sent: failure rate not 0")
	}
}
