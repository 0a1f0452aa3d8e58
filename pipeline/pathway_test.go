// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/tracing"
)

// pathwayQueries returns n queries the demo index answers.
func pathwayQueries(n int) []string {
	base := []string{"gzip", "parse a URL", "encode json", "tar archive", "sha256", "regular expression", "sort a slice", "template html"}
	out := make([]string, n)
	for i := range out {
		out[i] = base[i%len(base)]
	}
	return out
}

// TestPathwayLatencyWithTracesOff runs requests with trace sampling off,
// telemetry built by tracing.Setup from OTEL_* as the kretrieve command
// builds it, and metrics exported over real OTLP/HTTP: the export holds
// exactly one from-origin latency per request at the result collector, on
// the pathway hash chained through every checkpoint, every series
// exported equals what was recorded, and not one span is exported. With
// delta temporality the points of several exports add up to the same
// totals.
func TestPathwayLatencyWithTracesOff(t *testing.T) {
	const n = 120
	for _, temporality := range []string{"cumulative", "delta"} {
		t.Run(temporality, func(t *testing.T) {
			srv := otlptest.NewServer(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Endpoint())
			t.Setenv("OTEL_SERVICE_NAME", "kretrieve-pathways-off")
			t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", temporality)
			// Exports at the flush below and at shutdown only. A periodic
			// export in flight when Shutdown starts is cancelled by the
			// SDK's reader, and with delta temporality its measurements
			// are lost: tracing.Providers.Shutdown does not flush first.
			t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "600000")
			prefs, err := tracing.ReadMetricsPreferences(os.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			metrics := kafkatrace.NewMetrics()
			p, err := tracing.Setup(t.Context(), tracing.WithServiceName("kretrieve"), tracing.WithMetricProducer(tracing.NewMetricsProducer(metrics, tracing.WithTemporality(prefs.Temporality))))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
			if p.ServiceName != "kretrieve-pathways-off" || p.ParentBasedSampling {
				t.Fatalf("service %q, parent-based %v", p.ServiceName, p.ParentBasedSampling)
			}

			h := newHarness(t, 3)
			h.tracers, h.meters, h.prop = p.TracerProvider, p.MeterProvider, p.Propagator
			h.metrics, h.cfg.ParentBasedSampling, h.cfg.ServiceName = metrics, p.ParentBasedSampling, p.ServiceName
			stop := h.startWorkers()
			c := h.client(true)
			// Half the requests, an export, the other half: each series is
			// exported at least twice, so that delta points must add up.
			sendAndWait(t, c, pathwayQueries(n/2))
			if err := p.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			sendAndWait(t, c, pathwayQueries(n-n/2))
			stop()
			if err := c.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}

			if spans := srv.Spans(); len(spans) != 0 || p.Stats().Ended != 0 {
				t.Fatalf("traces are off, yet %d spans exported (stats %+v)", len(spans), p.Stats())
			}
			path := chain(0, requestCheckpoints(p.ServiceName, messages.DefaultTopics())...)
			series := pathwaySeries(t, metrics)
			checkSeries(t, series, exactly(n, path...))
			checkOriginsTelescope(t, series, path)

			wantTemporality := map[string]string{"cumulative": "CUMULATIVE", "delta": "DELTA"}[temporality]
			points := srv.ExponentialHistogramPoints(otelnames.MetricPathwayLatency)
			exp := exportedPathways(t, points, wantTemporality)
			final := path[len(path)-1]
			finalKey := exportedKey{
				edge: "retrieval.results → kretrieve-pathways-off", direction: "in", measure: otelnames.MeasureOrigin,
				hash: pathway.HashString(final.hash), parent: pathway.HashString(final.parent),
			}
			if e := exp[finalKey]; e == nil || e.count != n || e.points < 2 {
				t.Fatalf("exported end-to-end latencies at the collector %+v, want %d in at least 2 exports; series:\n%s", e, n, describeExported(exp))
			}
			for _, e := range exp {
				if e.exemplars != 0 {
					t.Errorf("exemplars exported while no trace is sampled")
				}
			}
			// The export is the recorded histograms, series by series.
			if len(exp) != 2*len(series) {
				t.Errorf("%d series exported, %d recorded (×2 measures)", len(exp), len(series))
			}
			multi := 0 // series exported more than once
			for k, s := range series {
				base := exportedKey{edge: k.cp.Edge(), direction: k.cp.Direction.String(), hash: pathway.HashString(k.hash), parent: pathway.HashString(k.parent)}
				edge, origin := base, base
				edge.measure, origin.measure = otelnames.MeasureEdge, otelnames.MeasureOrigin
				checkExportMatches(t, "edge "+k.cp.Edge(), exp[edge], s.Edge)
				checkExportMatches(t, "origin "+k.cp.Edge(), exp[origin], s.Origin)
				if e := exp[edge]; e != nil && e.points > 1 {
					multi++
				}
			}
			t.Logf("%d points in %d series; series exported more than once: %d", len(points), len(exp)/2, multi)
		})
	}
}

// quantileTolerance is how far a pathway quantile may be from the one
// computed from spans: a bucket's middle is within 2.2% of any value in
// it, and a send span starts some microseconds after its out checkpoint is
// taken (both in OnProduceRecordBuffered, the checkpoint first).
const quantileTolerance = 0.05

// workingIndex is the demo index taking work of service time per search
// and per highlight, as an index on disk or across the network would: the
// out checkpoints' edge latencies (a handler's time) then last
// milliseconds instead of the in-memory index's tens of microseconds,
// which is the order of the offset between an out checkpoint and the start
// of its send span, the one difference between pathway and trace times.
type workingIndex struct {
	*search.Index
	work time.Duration
}

func (ix *workingIndex) Search(ctx context.Context, query string, k int) ([]search.Hit, error) {
	ix.serve(ctx)
	return ix.Index.Search(ctx, query, k)
}

func (ix *workingIndex) Highlight(ctx context.Context, query string, ids []string, maxRunes int) (map[string]search.Highlighted, error) {
	ix.serve(ctx)
	return ix.Index.Highlight(ctx, query, ids, maxRunes)
}

// serve spends the service time (simulated work, not a wait for an event).
func (ix *workingIndex) serve(ctx context.Context) {
	t := time.NewTimer(ix.work)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// TestPathwayQuantilesMatchTraces samples every trace and checks, per
// checkpoint, that the pathway histograms' p50 and p99 of the edge and
// from-origin latencies agree within 5% with the same order statistics
// computed from span timestamps: an in checkpoint is taken at the process
// span's start (exactly: StartProcess starts the span at the checkpoint's
// time), an out checkpoint just before the send span starts, and the
// origin is the request's first send. Each exemplar links the span of its
// checkpoint, and its value differs from its trace's by that send-span
// offset alone.
func TestPathwayQuantilesMatchTraces(t *testing.T) {
	const n = 300
	const service = "kretrieve-quantiles"
	h := newHarness(t, 6)
	h.cfg.ServiceName = service
	idx := &workingIndex{Index: h.idx, work: 3 * time.Millisecond}
	rw, err := h.pipeline().NewWorker(messages.StageRetrieval, idx)
	if err != nil {
		t.Fatal(err)
	}
	ew, err := h.pipeline().NewWorker(messages.StageEnrichment, idx)
	if err != nil {
		t.Fatal(err)
	}
	stop := runWorkers(t, rw, ew)
	c := h.client(true)
	outs := sendAndWait(t, c, pathwayQueries(n))
	stop()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	topics := messages.DefaultTopics()
	path := chain(0, requestCheckpoints(service, topics)...)
	series := pathwaySeries(t, h.metrics)
	checkSeries(t, series, exactly(n, path...))
	checkOriginsTelescope(t, series, path)
	if s := series[path[0].key()]; s.Edge.ZeroCount != n || s.Origin.ZeroCount != n {
		t.Errorf("the client's out checkpoint starts each pathway: edge zeros %d, origin zeros %d, want %d", s.Edge.ZeroCount, s.Origin.ZeroCount, n)
	}

	// Span start times of every request's trace, by span name.
	traces := byTrace(h.recorded())
	starts := make([]map[string]time.Time, 0, n)
	ids := map[string]string{} // span id → name, for exemplars
	for _, out := range outs {
		byName := map[string]time.Time{}
		for _, s := range traces[out.TraceID] {
			if _, dup := byName[s.Name]; dup {
				t.Fatalf("trace %s: two %q spans", out.TraceID, s.Name)
			}
			byName[s.Name] = s.Start
			ids[s.SpanID] = s.Name
		}
		starts = append(starts, byName)
	}
	send := func(topic string) string { return "send " + topic }
	process := func(topic string) string { return "process " + topic }
	// What each checkpoint measures, in spans: the span its checkpoint is
	// taken at, the span of the previous checkpoint and the request's first
	// send span (the origin).
	type measured struct {
		hop        hop
		at, prev   string
		in         bool
		edge, orig []time.Duration
	}
	ms := []*measured{
		{hop: path[1], at: process(topics.Requests), prev: send(topics.Requests), in: true},
		{hop: path[2], at: send(topics.Candidates), prev: process(topics.Requests)},
		{hop: path[3], at: process(topics.Candidates), prev: send(topics.Candidates), in: true},
		{hop: path[4], at: send(topics.Results), prev: process(topics.Candidates)},
		{hop: path[5], at: process(topics.Results), prev: send(topics.Results), in: true},
	}
	origin := send(topics.Requests)
	byTraceValue := map[string]map[string][2]time.Duration{} // trace → at span → edge, origin
	for i, st := range starts {
		for _, m := range ms {
			at, ok1 := st[m.at]
			prev, ok2 := st[m.prev]
			first, ok3 := st[origin]
			if !ok1 || !ok2 || !ok3 {
				t.Fatalf("trace %s lacks %q, %q or %q", outs[i].TraceID, m.at, m.prev, origin)
			}
			e, o := at.Sub(prev), at.Sub(first)
			m.edge, m.orig = append(m.edge, e), append(m.orig, o)
			if byTraceValue[outs[i].TraceID] == nil {
				byTraceValue[outs[i].TraceID] = map[string][2]time.Duration{}
			}
			byTraceValue[outs[i].TraceID][m.at] = [2]time.Duration{e, o}
		}
	}

	var maxOffset time.Duration
	for _, m := range ms {
		s := series[m.hop.key()]
		for _, c := range []struct {
			measure   string
			snap      pathway.Snapshot
			fromSpans []time.Duration
		}{{"edge", s.Edge, m.edge}, {"origin", s.Origin, m.orig}} {
			for _, q := range []float64{0.5, 0.99} {
				got, want := c.snap.Quantile(q), orderStatistic(c.fromSpans, q)
				rel := math.Abs(float64(got-want)) / float64(want)
				t.Logf("%-40s %-6s p%-2.0f pathway %10v spans %10v  %+.2f%%", m.hop.cp.Edge(), c.measure, q*100, got, want, 100*float64(got-want)/float64(want))
				if rel > quantileTolerance {
					t.Errorf("%s %s p%.0f: pathway %v, spans %v (%.1f%% apart)", m.hop.cp.Edge(), c.measure, q*100, got, want, 100*rel)
				}
			}
		}
		// Exemplars: the span of the checkpoint, and the trace's value:
		// an in checkpoint is taken at its process span's start, and a
		// send span starts at its out checkpoint's time, so the two agree
		// but for the rounding of the time conversions.
		if len(s.Edge.Exemplars) == 0 {
			t.Errorf("%s: no exemplar though every trace is sampled", m.hop.cp.Edge())
		}
		for _, e := range s.Edge.Exemplars {
			if name := ids[e.SpanID.String()]; name != m.at {
				t.Errorf("%s: exemplar of span %s (%q), want a %q span", m.hop.cp.Edge(), e.SpanID, name, m.at)
				continue
			}
			fromSpans := byTraceValue[e.TraceID.String()][m.at][0]
			offset := (e.Value - fromSpans).Abs()
			if offset > time.Microsecond {
				t.Errorf("%s: exemplar %v, spans %v: the checkpoint and its span's start differ by %v", m.hop.cp.Edge(), e.Value, fromSpans, offset)
			}
			maxOffset = max(maxOffset, offset)
		}
	}
	t.Logf("largest offset between a checkpoint and its span's start, over %d exemplars: %v", exemplarCount(series), maxOffset)
}

func exemplarCount(series map[seriesKey]kafkatrace.PathwayStats) int {
	n := 0
	for _, s := range series {
		n += len(s.Edge.Exemplars)
	}
	return n
}

// publishUntil publishes requests every interval, at least minimum of
// them, then until done (asked before each further one) reports true, and
// waits for their outcomes in the background. More than maximum fails the
// test.
func publishUntil(t *testing.T, c *producer.Client, interval time.Duration, minimum, maximum int, done func(published int) bool) *load {
	t.Helper()
	l := &load{}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	queries := pathwayQueries(maximum)
	for i := 0; i < minimum || !done(i); i++ {
		if i == maximum {
			t.Fatalf("still publishing after %d requests", maximum)
		}
		call, err := c.Start(t.Context(), messages.Request{RequestID: fmt.Sprintf("req-%05d", i), Query: queries[i]}, true)
		if err != nil {
			t.Fatal(err)
		}
		l.calls = append(l.calls, call)
		<-tick.C
	}
	l.outcomes, l.errs = make([]results.Outcome, len(l.calls)), make([]error, len(l.calls))
	for i, call := range l.calls {
		l.wg.Go(func() {
			l.outcomes[i], l.errs[i] = call.Wait(context.Background(), 2*time.Minute)
			l.progress.Add(1)
		})
	}
	return l
}

// waitDelivered waits until the collector's in checkpoint on the results
// topic, cp, has measured (on any pathway) every record of the results
// topic, written by stopped workers so that their number is final, and
// returns that number. It fails if the collector measured more.
func waitDelivered(t *testing.T, h *harness, cp pathway.Checkpoint) int64 {
	t.Helper()
	records := topicRecords(t, h, h.cfg.Topology().Results())
	measured := func() uint64 {
		var m uint64
		for k, s := range pathwaySeries(t, h.metrics) {
			if k.cp == cp {
				m += s.Origin.Count
			}
		}
		return m
	}
	eventually(t, func() bool { return measured() >= uint64(records) }, "the collector measuring all %d result records", records)
	if m := measured(); m != uint64(records) {
		t.Fatalf("the collector measured %d results, the topic holds %d records", m, records)
	}
	return records
}

// TestPathwaysAcrossRebalance adds a second retrieval worker while
// requests flow: the group rebalances, both workers process requests, and
// every request still follows the one pathway of the pipeline, measured
// exactly once at every checkpoint (a cooperative rebalance commits before
// handing partitions over, so nothing is redelivered), with its origin
// carried to the end.
func TestPathwaysAcrossRebalance(t *testing.T) {
	const service = "kretrieve-rebalance"
	h := newHarness(t, 6)
	h.cfg.ServiceName = service
	first, err := h.pipeline().NewWorker(messages.StageRetrieval, h.idx)
	if err != nil {
		t.Fatal(err)
	}
	enrich, err := h.pipeline().NewWorker(messages.StageEnrichment, h.idx)
	if err != nil {
		t.Fatal(err)
	}
	stopFirst := runWorkers(t, first, enrich)
	c := h.client(true)
	second, err := h.pipeline().NewWorker(messages.StageRetrieval, h.idx)
	if err != nil {
		t.Fatal(err)
	}
	var stopSecond func()
	joinedAt := 0
	l := publishUntil(t, c, 4*time.Millisecond, 150, 10_000, func(i int) bool {
		if stopSecond == nil && first.Processed() >= 50 {
			stopSecond, joinedAt = runWorkers(t, second), i
		}
		// Requests keep coming until the newcomer has its share.
		return stopSecond != nil && second.Processed() >= 50
	})
	n := len(l.calls)
	if completed, failed := l.check(t); completed != n || failed != 0 {
		t.Fatalf("%d of %d completed, %d dead-lettered", completed, n, failed)
	}
	stopSecond()
	stopFirst()
	t.Logf("%d requests; the second worker joined after %d and processed %d, the first %d", n, joinedAt, second.Processed(), first.Processed())
	if first.Processed()+second.Processed() != int64(n) {
		t.Errorf("retrieval processed %d+%d records for %d requests", first.Processed(), second.Processed(), n)
	}

	path := chain(0, requestCheckpoints(service, messages.DefaultTopics())...)
	if delivered := waitDelivered(t, h, path[len(path)-1].cp); delivered != int64(n) || c.Collector.Duplicates() != 0 {
		t.Errorf("%d results delivered, %d duplicates, for %d requests: nothing was meant to be redelivered", delivered, c.Collector.Duplicates(), n)
	}
	series := pathwaySeries(t, h.metrics)
	checkSeries(t, series, exactly(uint64(n), path...))
	checkOriginsTelescope(t, series, path)
	checkOriginCoversEdge(t, series)
}

// refuseCommits makes b refuse every offset commit while on is true,
// counting the refusals.
func refuseCommits(b *broker.Broker, on *atomic.Bool, refused *atomic.Int64) {
	b.Cluster().ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		if !on.Load() {
			return nil, nil, false
		}
		refused.Add(1)
		return refusedCommit(req.(*kmsg.OffsetCommitRequest)), nil, true
	})
}

// TestPathwaysAcrossWorkerRestart stops every worker while requests flow,
// after the broker refused all their offset commits, and starts new ones:
// the new workers process every request and every candidate again
// (at-least-once), so results are delivered more than once. Every
// delivery is measured exactly once at every checkpoint (the measurements
// equal the records produced and the records processed, and at the
// collector the requests plus its duplicates), and every measurement,
// redelivered or not, is on the pipeline's one pathway.
func TestPathwaysAcrossWorkerRestart(t *testing.T) {
	const n = 400
	const service = "kretrieve-restart"
	b := brokertest.NewBroker(t, 3)
	var refusing atomic.Bool
	var refused atomic.Int64
	refusing.Store(true)
	refuseCommits(b, &refusing, &refused)
	h := newHarnessOn(t, b.Addr(), 3)
	h.cfg.ServiceName = service
	workers := func() (retrieval, enrichment *consumers.Worker) {
		rw, err := h.pipeline().NewWorker(messages.StageRetrieval, h.idx)
		if err != nil {
			t.Fatal(err)
		}
		ew, err := h.pipeline().NewWorker(messages.StageEnrichment, h.idx)
		if err != nil {
			t.Fatal(err)
		}
		return rw, ew
	}
	r1, e1 := workers()
	stop := runWorkers(t, r1, e1)
	c := h.client(true)
	l := startLoad(t, c, n, 2*time.Minute)
	waitProgress(t, l, n/8)
	stop()
	refusing.Store(false)
	if refused.Load() == 0 {
		t.Fatal("no commit was refused")
	}
	mid := l.progress.Load()
	r2, e2 := workers()
	stop = runWorkers(t, r2, e2)
	if completed, failed := l.check(t); completed != n || failed != 0 {
		t.Fatalf("%d of %d completed, %d dead-lettered", completed, n, failed)
	}
	// Nothing the first workers did was committed: the new ones process
	// every request, then every candidate, again. Once both groups have
	// committed everything, every output is in its topic.
	waitCommitted(t, h, messages.StageRetrieval, h.cfg.Topology().Requests())
	waitCommitted(t, h, messages.StageEnrichment, h.cfg.Topology().Stages[0].Output)
	stop()

	path := chain(0, requestCheckpoints(service, messages.DefaultTopics())...)
	delivered := waitDelivered(t, h, path[len(path)-1].cp)
	candidates := topicRecords(t, h, h.cfg.Topology().Stages[0].Output)
	// Outputs in flight when the first workers stopped were cancelled
	// (never acknowledged), their inputs redelivered: their out
	// checkpoints were taken all the same.
	lostCandidates, lostResults := failedSends(t, h, h.cfg.Topology().Stages[0].Output), failedSends(t, h, h.cfg.Topology().Results())
	// So were the in checkpoints of records whose processing the stop
	// interrupted.
	cutRequests, cutCandidates := interrupted(t, h, h.cfg.Topology().Requests()), interrupted(t, h, h.cfg.Topology().Stages[0].Output)
	dups := c.Collector.Duplicates()
	t.Logf("restart after %d outcomes; commits refused: %d; retrieval processed %d+%d, enrichment %d+%d; cancelled at the stop: %d candidates, %d results sent, %d requests, %d candidates processed; results delivered: %d for %d requests (duplicates %d)",
		mid, refused.Load(), r1.Processed(), r2.Processed(), e1.Processed(), e2.Processed(), lostCandidates, lostResults, cutRequests, cutCandidates, delivered, n, dups)
	if r1.Processed() == 0 || r2.Processed() != n || e2.Processed() != candidates || dups == 0 {
		t.Fatalf("the restart did not redeliver everything as provoked")
	}
	if delivered != n+dups || c.Collector.Late() != 0 || c.Collector.Unexpected() != 0 {
		t.Errorf("%d results delivered; %d requests + %d duplicates (late %d, unexpected %d)", delivered, n, dups, c.Collector.Late(), c.Collector.Unexpected())
	}
	series := pathwaySeries(t, h.metrics)
	// One measurement per publication, per record processing started and
	// per record produced (acknowledged or not), on the one pathway.
	checkSeries(t, series,
		exactly(n, path[0]),
		exactly(uint64(r1.Processed()+r2.Processed())+cutRequests, path[1]),
		exactly(uint64(candidates)+lostCandidates, path[2]),
		exactly(uint64(e1.Processed()+e2.Processed())+cutCandidates, path[3]),
		exactly(uint64(delivered)+lostResults, path[4]),
		exactly(uint64(delivered), path[5]))
	checkOriginCoversEdge(t, series)
}

// poisonSearcher fails queries starting with "poison" as invalid while
// armed: the retrieval worker dead-letters them, and a replay once it is
// disarmed succeeds.
type poisonSearcher struct {
	*search.Index
	armed atomic.Bool
}

func (s *poisonSearcher) Search(ctx context.Context, query string, k int) ([]search.Hit, error) {
	if s.armed.Load() && strings.HasPrefix(query, "poison") {
		return nil, fmt.Errorf("%w: poisoned", search.ErrInvalidQuery)
	}
	return s.Index.Search(ctx, query, k)
}

// runPoisonWorkers runs a retrieval worker over an armed poisonSearcher
// and an enrichment worker; stop stops both.
func (h *harness) runPoisonWorkers() (searcher *poisonSearcher, stop func()) {
	h.t.Helper()
	searcher = &poisonSearcher{Index: h.idx}
	searcher.armed.Store(true)
	rw, err := h.pipeline().NewWorker(messages.StageRetrieval, searcher)
	if err != nil {
		h.t.Fatal(err)
	}
	ew, err := h.pipeline().NewWorker(messages.StageEnrichment, h.idx)
	if err != nil {
		h.t.Fatal(err)
	}
	return searcher, runWorkers(h.t, rw, ew)
}

// TestPathwaysOfDeadLetterAndReplay dead-letters poison requests, then
// replays them with dlq.Replay (as `kretrieve dlq replay` does:
// its own service and consumer group) once the fault is gone. The dead
// letters continue the requests' pathway to the dead-letter topic and the
// collector; the replay is a checkpoint of its own, so the republished
// requests follow a pathway apart from the normal one to their results;
// every hop of every pathway keeps the requests' origin.
func TestPathwaysOfDeadLetterAndReplay(t *testing.T) {
	const (
		n, poisoned   = 100, 5
		service       = "kretrieve-dlq-test"
		poisonService = "kretrieve-poisoner" // publishes the poison requests
		replayService = "kretrieve-dlq"
	)
	h := newHarness(t, 3)
	h.cfg.ServiceName = service
	topics := messages.DefaultTopics()
	searcher, stop := h.runPoisonWorkers()
	c := h.client(true)
	// The poison requests come from another service, so that their
	// pathway is apart from the good requests' from the start.
	saved := h.cfg
	h.cfg.ServiceName = poisonService
	poisoner, err := h.pipeline().NewClient(t.Context(), false)
	h.cfg = saved
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = poisoner.Close(context.Background()) })

	var poisonOutcomes []<-chan results.Outcome
	for i := range poisoned {
		id := fmt.Sprintf("poison-%d", i)
		poisonOutcomes = append(poisonOutcomes, c.Collector.Expect(id))
		call, err := poisoner.Start(t.Context(), messages.Request{RequestID: id, Query: "poison gzip"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := call.Acked(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	published := time.Now() // every poison request's origin is before
	sendAndWait(t, c, pathwayQueries(n))
	for _, ch := range poisonOutcomes {
		select {
		case out := <-ch:
			if !out.Failed || out.Topic != messages.DLQTopic(topics.Requests) {
				t.Fatalf("poison outcome %+v, want a dead letter on %s", out, messages.DLQTopic(topics.Requests))
			}
		case <-time.After(resultTimeout):
			t.Fatal("a poison request was not dead-lettered")
		}
	}

	searcher.armed.Store(false)
	replayStart := time.Now()
	tracer := kafkatrace.New(
		kafkatrace.WithTracerProvider(h.tp), kafkatrace.WithMetrics(h.metrics), kafkatrace.WithPropagator(h.prop),
		kafkatrace.WithClientID(h.cfg.Kafka.ClientID), kafkatrace.WithServerAddress(h.cfg.Kafka.Brokers[0]),
		kafkatrace.WithParentBasedSampling(),
		kafkatrace.WithConsumerGroup(dlq.DefaultReplayGroup), kafkatrace.WithPathways(replayService),
	)
	res, err := dlq.Replay(t.Context(), kafkaclient.Options(h.cfg.Kafka, h.logger, nil), tracer,
		dlq.ReplayConfig{Topics: []string{messages.DLQTopic(topics.Requests)}},
		dlq.WithTracerProvider(h.tp), dlq.WithLogger(h.logger))
	if err != nil || res.Replayed != poisoned {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	// The replayed requests' results come after their dead letters: the
	// collector counts them as duplicates.
	eventually(t, func() bool { return c.Collector.Duplicates() >= poisoned }, "results of the replayed requests")
	stop()
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	reqs := requestCheckpoints(service, topics)
	good := chain(0, reqs...)
	poison := chain(0,
		pathway.Checkpoint{Service: poisonService, Topic: topics.Requests, Direction: pathway.Out},
		reqs[1],
		pathway.Checkpoint{Service: service, Group: messages.StageRetrieval, Topic: messages.DLQTopic(topics.Requests), Direction: pathway.Out},
	)
	deadLettered := chain(poison[2].hash, pathway.Checkpoint{Service: service, Topic: messages.DLQTopic(topics.Requests), Direction: pathway.In})
	replayed := chain(poison[2].hash, append([]pathway.Checkpoint{
		{Service: replayService, Group: dlq.DefaultReplayGroup, Topic: messages.DLQTopic(topics.Requests), Direction: pathway.In},
		{Service: replayService, Group: dlq.DefaultReplayGroup, Topic: topics.Requests, Direction: pathway.Out},
	}, reqs[1:]...)...)
	if delivered := waitDelivered(t, h, reqs[len(reqs)-1]); delivered != n+poisoned || c.Collector.Duplicates() != poisoned {
		t.Errorf("%d results delivered (%d duplicates) for %d requests and %d replays", delivered, c.Collector.Duplicates(), n, poisoned)
	}
	series := pathwaySeries(t, h.metrics)
	checkSeries(t, series, exactly(n, good...), exactly(poisoned, poison...), exactly(poisoned, deadLettered...), exactly(poisoned, replayed...))
	if t.Failed() {
		t.Fatalf("series:\n%s", describeSeries(series))
	}
	// The replayed requests reach retrieval and the collector on pathways
	// of their own: the chain passed the replay checkpoint.
	if replayed[2].hash == good[1].hash || replayed[len(replayed)-1].hash == good[len(good)-1].hash {
		t.Fatal("the replayed requests share the normal pathway")
	}
	checkOriginsTelescope(t, series, good,
		append(slices.Clone(poison), deadLettered...),
		append(slices.Clone(poison), replayed...))
	checkOriginCoversEdge(t, series)
	// The origin is still the poison requests' first send, before the
	// replay started.
	if got, least := series[replayed[len(replayed)-1].key()].Origin.Sum, poisoned*replayStart.Sub(published); got < least {
		t.Errorf("replayed requests' from-origin latencies sum to %v, less than %v since they were published", got, least)
	}
}

// TestHostilePathwayHeadersStartFreshPathway produces requests directly
// with pathway headers that are garbage, of the wrong length or version,
// with a zero hash, implausible times, or repeated: each is processed as
// any request (it gets its result) and its pathway starts afresh at the
// retrieval group, with parent hash 0 and its origin there. A well-formed
// header, the control, is continued.
func TestHostilePathwayHeadersStartFreshPathway(t *testing.T) {
	const service = "kretrieve-hostile"
	begin := time.Now()
	h := newHarness(t, 3)
	h.cfg.ServiceName = service
	h.startWorkers()
	c := h.client(true)
	raw := rawProducer(t, h)

	now := time.Now().UnixNano()
	const controlHash = 0x5eed_0000_0000_beef
	valid := pathway.Context{Hash: controlHash, Origin: now - int64(time.Second), Prev: now - int64(500*time.Millisecond)}.Append(nil)
	otherVersion := slices.Clone(valid)
	otherVersion[0] = 2
	enc := func(c pathway.Context) []byte { return c.Append(nil) }
	type headers struct {
		name   string
		values [][]byte // of the pathway header, in order
	}
	hostile := []headers{
		{"garbage", [][]byte{[]byte("definitely not a pathway context!")}},
		{"empty", [][]byte{{}}},
		{"short", [][]byte{valid[:pathway.Size-1]}},
		{"long", [][]byte{append(slices.Clone(valid), 0)}},
		{"other version", [][]byte{otherVersion}},
		{"zero hash", [][]byte{enc(pathway.Context{Origin: now - int64(time.Second), Prev: now})}},
		{"far future", [][]byte{enc(pathway.Context{Hash: 7, Origin: now + int64(time.Hour), Prev: now + int64(time.Hour)})}},
		{"ancient origin", [][]byte{enc(pathway.Context{Hash: 7, Origin: now - int64(31*24*time.Hour), Prev: now})}},
		{"previous before origin", [][]byte{enc(pathway.Context{Hash: 7, Origin: now, Prev: now - 1})}},
		{"repeated", [][]byte{valid, valid}},
	}
	all := append(slices.Clone(hostile), headers{"control", [][]byte{valid}})
	waits := make([]<-chan results.Outcome, len(all))
	for i, hc := range all {
		id := fmt.Sprintf("hostile-%02d", i)
		waits[i] = c.Collector.Expect(id)
		rec := &kgo.Record{Topic: h.cfg.Topology().Requests(), Key: []byte(id), Value: []byte(`{"request_id": "` + id + `", "query": "gzip"}`)}
		for _, v := range hc.values {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: pathway.HeaderKey, Value: v})
		}
		if err := raw.ProduceSync(t.Context(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for i, ch := range waits {
		select {
		case out := <-ch:
			if out.Failed || len(out.Result.Documents) == 0 {
				t.Errorf("%s header: outcome %+v", all[i].name, out)
			}
		case <-time.After(resultTimeout):
			t.Fatalf("%s header: no result", all[i].name)
		}
	}
	fresh := chain(0, requestCheckpoints(service, messages.DefaultTopics())[1:]...)
	control := chain(controlHash, requestCheckpoints(service, messages.DefaultTopics())[1:]...)
	waitDelivered(t, h, fresh[len(fresh)-1].cp)
	elapsed := time.Since(begin)

	series := pathwaySeries(t, h.metrics)
	checkSeries(t, series, exactly(uint64(len(hostile)), fresh...), exactly(1, control...))
	if t.Failed() {
		t.Fatalf("series:\n%s", describeSeries(series))
	}
	if s := series[fresh[0].key()]; s.Origin.ZeroCount != uint64(len(hostile)) {
		t.Errorf("fresh pathways: %d of %d origins at retrieval", s.Origin.ZeroCount, len(hostile))
	}
	// The control's origin came with its header: 500 ms before its
	// previous checkpoint.
	if s := series[control[0].key()]; s.Origin.Sum-s.Edge.Sum != 500*time.Millisecond {
		t.Errorf("control: origin %v, edge %v: the header's origin was not continued", s.Origin.Sum, s.Edge.Sum)
	}
	checkOriginsTelescope(t, series, fresh, control)
	checkOriginCoversEdge(t, series)
	// No hostile time was adopted: every latency from a fresh origin lies
	// within the test's run (a bucket's middle is within 2.2% of it).
	if got := series[fresh[len(fresh)-1].key()].Origin.Quantile(1); got > elapsed*1023/1000 {
		t.Errorf("largest from-origin latency of a fresh pathway %v, the test ran %v", got, elapsed)
	}
}
