// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
)

// requestCheckpoints returns the checkpoints a request passes from the
// client of service that publishes it to the collector of service that
// receives its result, through the retrieval and enrichment groups of
// service's workers.
func requestCheckpoints(service string, topics messages.Topics) []pathway.Checkpoint {
	return []pathway.Checkpoint{
		{Service: service, Topic: topics.Requests, Direction: pathway.Out},
		{Service: service, Group: messages.StageRetrieval, Topic: topics.Requests, Direction: pathway.In},
		{Service: service, Group: messages.StageRetrieval, Topic: topics.Candidates, Direction: pathway.Out},
		{Service: service, Group: messages.StageEnrichment, Topic: topics.Candidates, Direction: pathway.In},
		{Service: service, Group: messages.StageEnrichment, Topic: topics.Results, Direction: pathway.Out},
		{Service: service, Topic: topics.Results, Direction: pathway.In},
	}
}

// hop is one checkpoint of an expected pathway with the hashes its
// measurements carry.
type hop struct {
	cp           pathway.Checkpoint
	hash, parent uint64
}

func (h hop) String() string {
	return fmt.Sprintf("%q %s %s←%s", h.cp.Edge(), h.cp.Direction, pathway.HashString(h.hash), pathway.HashString(h.parent))
}

func (h hop) key() seriesKey { return seriesKey(h) }

// chain returns the hops of a pathway through cps, in order, continuing
// the pathway whose hash is parent (0: the pathway starts at cps[0]).
func chain(parent uint64, cps ...pathway.Checkpoint) []hop {
	out := make([]hop, len(cps))
	for i, cp := range cps {
		h := pathway.Chain(parent, cp.ID())
		out[i] = hop{cp: cp, hash: h, parent: parent}
		parent = h
	}
	return out
}

// seriesKey identifies a pathway series: checkpoint and hashes.
type seriesKey struct {
	cp           pathway.Checkpoint
	hash, parent uint64
}

// pathwaySeries indexes the pathway series of m.
func pathwaySeries(t *testing.T, m *kafkatrace.Metrics) map[seriesKey]kafkatrace.PathwayStats {
	t.Helper()
	out := map[seriesKey]kafkatrace.PathwayStats{}
	for _, s := range m.Pathways() {
		k := seriesKey{cp: s.Checkpoint, hash: s.Hash, parent: s.Parent}
		if _, dup := out[k]; dup {
			t.Fatalf("two series for %+v", k)
		}
		out[k] = s
	}
	return out
}

// want is an expected series and its measurement count.
type want struct {
	hop
	n uint64
}

// exactly wants each of hs with n measurements.
func exactly(n uint64, hs ...hop) []want {
	out := make([]want, len(hs))
	for i, h := range hs {
		out[i] = want{hop: h, n: n}
	}
	return out
}

// checkSeries asserts that series holds exactly the wanted series, no
// other, each with its count of edge and of from-origin measurements.
func checkSeries(t *testing.T, series map[seriesKey]kafkatrace.PathwayStats, wants ...[]want) {
	t.Helper()
	expected := map[seriesKey]want{}
	for _, ws := range wants {
		for _, w := range ws {
			if prev, dup := expected[w.key()]; dup && prev.n != w.n {
				t.Fatalf("series %v wanted twice with different counts", w.hop)
			}
			expected[w.key()] = w
		}
	}
	for k, s := range series {
		w, ok := expected[k]
		if !ok {
			t.Errorf("unexpected series %v: %d measurements", hop(k), s.Edge.Count)
			continue
		}
		if s.Edge.Count != s.Origin.Count {
			t.Errorf("series %v: %d edge and %d from-origin measurements", w.hop, s.Edge.Count, s.Origin.Count)
		}
		if s.Edge.Count != w.n {
			t.Errorf("series %v: %d measurements, want %d", w.hop, s.Edge.Count, w.n)
		}
	}
	for k, w := range expected {
		if _, ok := series[k]; !ok {
			t.Errorf("series %v missing (want %d measurements)", w.hop, w.n)
		}
	}
}

// checkOriginsTelescope asserts, for each path (hops whose every
// measurement leads to exactly one measurement at the next hop: no
// redelivery), that the origin is carried unchanged along it: at every hop
// the from-origin latencies add up exactly, to the nanosecond, to the first
// hop's plus the edge latencies of the hops since. An origin lost or reset
// on the way (a replay starting a new pathway, a header not continued)
// makes the from-origin sum fall short of the edges'. (A latency of 0 or
// less counts as a zero, outside the sum: within one process's clock none
// but the first checkpoint's is.)
func checkOriginsTelescope(t *testing.T, series map[seriesKey]kafkatrace.PathwayStats, paths ...[]hop) {
	t.Helper()
	for _, path := range paths {
		first, ok := series[path[0].key()]
		if !ok {
			t.Errorf("path from %v: first hop missing", path[0])
			continue
		}
		acc := first.Origin.Sum
		for _, h := range path[1:] {
			s, ok := series[h.key()]
			if !ok {
				t.Errorf("path from %v: hop %v missing", path[0], h)
				break
			}
			if s.Edge.Count != first.Edge.Count {
				t.Errorf("path from %v: %d measurements at %v, %d at the first hop: not one-to-one", path[0], s.Edge.Count, h, first.Edge.Count)
				break
			}
			acc += s.Edge.Sum
			if s.Origin.Sum != acc {
				t.Errorf("%v: from-origin latencies sum to %v, the first hop's plus the edges since to %v (Δ %v)", h, s.Origin.Sum, acc, s.Origin.Sum-acc)
			}
		}
	}
}

// checkOriginCoversEdge asserts that on every series continuing a pathway
// (not the first checkpoint of one, whose edge is the record's queue wait
// and origin 0) the latency from origin is at least the edge latency: in
// total and at every quantile.
func checkOriginCoversEdge(t *testing.T, series map[seriesKey]kafkatrace.PathwayStats) {
	t.Helper()
	for k, s := range series {
		if k.parent == 0 {
			continue
		}
		if s.Origin.Sum < s.Edge.Sum {
			t.Errorf("%v: from-origin sum %v < edge sum %v", hop(k), s.Origin.Sum, s.Edge.Sum)
		}
		for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
			if o, e := s.Origin.Quantile(q), s.Edge.Quantile(q); o < e {
				t.Errorf("%v: from-origin q%v %v < edge q%v %v", hop(k), q, o, q, e)
			}
		}
	}
}

// orderStatistic returns the q-quantile of vs ranked as
// pathway.Snapshot.Quantile ranks it: the ⌈q·n⌉-th smallest (at least the
// first).
func orderStatistic(vs []time.Duration, q float64) time.Duration {
	s := slices.Clone(vs)
	slices.Sort(s)
	rank := int(math.Ceil(q * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// exported is an exponential histogram series as received over OTLP,
// totalled over its points.
type exported struct {
	count, zeros uint64
	sum          float64
	buckets      map[int]uint64 // bucket index at pathway.Scale → count
	exemplars    int            // in the points totalled
	points       int            // points received
}

// exportedKey identifies a pathway latency series in the OTLP export.
type exportedKey struct {
	edge, direction, measure, hash, parent string
}

// exportedPathways totals the points of the pathway latency metric per
// series: the newest point of a cumulative series (whose counts must never
// go down), the sum of a delta series' points. Every point must have the
// given temporality.
func exportedPathways(t *testing.T, points []otlptest.ExponentialHistogramPoint, temporality string) map[exportedKey]*exported {
	t.Helper()
	str := func(p otlptest.ExponentialHistogramPoint, k attribute.Key) string {
		v, _ := p.Attributes[string(k)].(string)
		return v
	}
	bySeries := map[exportedKey][]otlptest.ExponentialHistogramPoint{}
	for _, p := range points {
		if p.Temporality != temporality {
			t.Fatalf("point of %s with temporality %s, want %s", p.Metric, p.Temporality, temporality)
		}
		if p.Unit != "s" || p.Scale != pathway.Scale || len(p.Negative.Counts) != 0 {
			t.Fatalf("point unit %q, scale %d, negative buckets %v", p.Unit, p.Scale, p.Negative)
		}
		k := exportedKey{
			edge: str(p, otelnames.PathwayEdge), direction: str(p, otelnames.PathwayDirection),
			measure: str(p, otelnames.PathwayMeasure),
			hash:    str(p, otelnames.PathwayHash), parent: str(p, otelnames.PathwayParentHash),
		}
		bySeries[k] = append(bySeries[k], p)
	}
	out := map[exportedKey]*exported{}
	for k, ps := range bySeries {
		if temporality == "CUMULATIVE" {
			sort.SliceStable(ps, func(i, j int) bool { return ps[i].Time.Before(ps[j].Time) })
			for i := 1; i < len(ps); i++ {
				if ps[i].Count < ps[i-1].Count {
					t.Errorf("cumulative series %+v went down from %d to %d", k, ps[i-1].Count, ps[i].Count)
				}
			}
			ps = ps[len(ps)-1:]
		}
		e := &exported{buckets: map[int]uint64{}, points: len(bySeries[k])}
		for _, p := range ps {
			e.count += p.Count
			e.zeros += p.ZeroCount
			e.sum += p.Sum
			e.exemplars += len(p.Exemplars)
			for i, c := range p.Positive.Counts {
				if c != 0 {
					e.buckets[int(p.Positive.Offset)+i] += c
				}
			}
		}
		out[k] = e
	}
	return out
}

// describeExported lists exported series for a failure message.
func describeExported(exp map[exportedKey]*exported) string {
	var lines []string
	for k, e := range exp {
		lines = append(lines, fmt.Sprintf("%q %s %s %s←%s n=%d in %d points", k.edge, k.direction, k.measure, k.hash, k.parent, e.count, e.points))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// snapshotBuckets returns the non-empty buckets of s by index.
func snapshotBuckets(s pathway.Snapshot) map[int]uint64 {
	m := map[int]uint64{}
	for i, c := range s.Buckets {
		if c != 0 {
			m[s.Offset+i] = c
		}
	}
	return m
}

// checkExportMatches asserts that the exported series e carries exactly
// the measurements of snapshot s.
func checkExportMatches(t *testing.T, name string, e *exported, s pathway.Snapshot) {
	t.Helper()
	if e == nil {
		t.Errorf("%s: not exported", name)
		return
	}
	if e.count != s.Count || e.zeros != s.ZeroCount {
		t.Errorf("%s: exported count %d zeros %d, recorded %d, %d", name, e.count, e.zeros, s.Count, s.ZeroCount)
	}
	if math.Abs(e.sum-s.Sum.Seconds()) > 1e-9*math.Max(1, s.Sum.Seconds()) {
		t.Errorf("%s: exported sum %vs, recorded %v", name, e.sum, s.Sum)
	}
	if want := snapshotBuckets(s); !maps.Equal(e.buckets, want) {
		t.Errorf("%s: exported buckets %v, recorded %v", name, e.buckets, want)
	}
}

// runWorkers runs ws until the returned stop function is called (or the
// test ends); stop waits until they have committed and left their groups.
func runWorkers(t *testing.T, ws ...*consumers.Worker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, len(ws))
	for _, w := range ws {
		go func() { done <- w.Run(ctx) }()
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		for range ws {
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	return stop
}

// topicRecords returns how many records topic holds (its partitions' end
// offsets: the topics of a test start empty and are never truncated).
func topicRecords(t *testing.T, h *harness, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kafkaclient.Options(h.cfg.Kafka, h.logger, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(t.Context(), topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// failedOps returns how many operations op ("send" or "process") on topic
// failed with an error.type accepted by errType, from the messaging
// metrics: metric is messaging.client.operation.duration for sends,
// messaging.process.duration for processing.
func failedOps(t *testing.T, h *harness, metric, op, topic string, errType func(string) bool) uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != kafkatrace.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			hist, ok := m.Data.(metricdata.Histogram[float64])
			if m.Name != metric || !ok {
				continue
			}
			for _, dp := range hist.DataPoints {
				o, _ := dp.Attributes.Value("messaging.operation.name")
				dest, _ := dp.Attributes.Value("messaging.destination.name")
				et, failed := dp.Attributes.Value("error.type")
				if failed && errType(et.AsString()) && o.AsString() == op && dest.AsString() == topic {
					n += dp.Count
				}
			}
		}
	}
	return n
}

// failedSends returns how many records produced to topic were never
// acknowledged.
func failedSends(t *testing.T, h *harness, topic string) uint64 {
	t.Helper()
	return failedOps(t, h, "messaging.client.operation.duration", "send", topic, func(string) bool { return true })
}

// interrupted returns how many records of topic a stopping worker started
// processing but left for redelivery (error.type "shutdown").
func interrupted(t *testing.T, h *harness, topic string) uint64 {
	t.Helper()
	return failedOps(t, h, "messaging.process.duration", "process", topic, func(e string) bool { return e == "shutdown" })
}

// waitCommitted waits until group has committed every record of topic.
func waitCommitted(t *testing.T, h *harness, group, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kafkaclient.Options(h.cfg.Kafka, h.logger, nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	eventually(t, func() bool {
		ends, err := adm.ListEndOffsets(t.Context(), topic)
		if err != nil || ends.Error() != nil {
			return false
		}
		committed, err := adm.FetchOffsets(t.Context(), group)
		if err != nil {
			return false
		}
		done := true
		ends.Each(func(o kadm.ListedOffset) {
			if c, ok := committed.Lookup(topic, o.Partition); !ok || c.At != o.Offset {
				done = false
			}
		})
		return done
	}, "group %s committing all of %s", group, topic)
}

// describeSeries lists the series for a failure message.
func describeSeries(series map[seriesKey]kafkatrace.PathwayStats) string {
	var lines []string
	for k, s := range series {
		lines = append(lines, fmt.Sprintf("%v n=%d", hop(k), s.Edge.Count))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
