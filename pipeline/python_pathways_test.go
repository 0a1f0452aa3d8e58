// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/internal/testutil/kafkapython"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/pipeline"
)

// pythonPathways is the Python stage's pathway-window module.
const pythonPathways = "../examples/python-stage/kretrieve_pathways.py"

// TestPythonBucketIndex: the Python stage's bucket_index is
// pathway.BucketIndex, bit for bit, on every bucket boundary (one
// nanosecond either side and on it), on small and huge durations, exact
// powers of two and random values.
func TestPythonBucketIndex(t *testing.T) {
	python := kafkapython.Python(t, "the Python stage's histogram buckets")
	var values []int64
	for ns := int64(1); ns <= 2000; ns++ {
		values = append(values, ns)
	}
	for i := -22 * 16; i <= 13*16; i++ {
		b := math.Exp2(float64(i)/16) * 1e9
		if b < 1 || b > math.MaxInt64/2 {
			continue
		}
		for _, v := range []int64{int64(math.Floor(b)) - 1, int64(math.Floor(b)), int64(math.Ceil(b)), int64(math.Ceil(b)) + 1} {
			values = append(values, max(v, 1))
		}
	}
	for e := 0; e < 63; e++ {
		values = append(values, 1<<e, 1<<e-1, 1<<e+1)
	}
	values = append(values, math.MaxInt64, math.MaxInt64-1, int64(time.Hour), int64(68*time.Minute), int64(100*time.Hour))
	r := rand.New(rand.NewPCG(1, 27))
	for range 20000 {
		values = append(values, 1+r.Int64N(int64(1)<<r.IntN(63)))
	}
	var in strings.Builder
	for _, v := range values {
		in.WriteString(strconv.FormatInt(v, 10) + "\n")
	}
	got := strings.Fields(runPython(t, python, in.String(), pythonPathways, "bucket-index"))
	if len(got) != len(values) {
		t.Fatalf("python printed %d indexes for %d values", len(got), len(values))
	}
	bad := 0
	for i, v := range values {
		if want := strconv.Itoa(pathway.BucketIndex(time.Duration(v))); got[i] != want {
			if bad++; bad <= 10 {
				t.Errorf("bucket_index(%d ns) = %s, pathway.BucketIndex = %s", v, got[i], want)
			}
		}
	}
	t.Logf("%d values, %d differ", len(values), bad)
}

// TestPythonBucketBoundaries: the mantissas of the bucket boundaries
// 2^(j/16) the Python stage searches are those package pathway computes
// with math.Exp2 (Python's 2 ** x differs from it in the last bit for
// three of them, which no nanosecond value may reach, but bit for bit is
// the contract).
func TestPythonBucketBoundaries(t *testing.T) {
	python := kafkapython.Python(t, "the Python stage's histogram buckets")
	var want []string
	for j := 1; j < 16; j++ {
		want = append(want, strconv.FormatUint(math.Float64bits(math.Exp2(float64(j)/16))&(1<<52-1), 16))
	}
	want = append(want, strconv.FormatUint(1<<52, 16))
	if got := strings.Fields(runPython(t, python, "", pythonPathways, "boundary-mantissas")); !slices.Equal(got, want) {
		t.Errorf("python boundary mantissas\n%v\nwant (Go's math.Exp2)\n%v", got, want)
	}
}

// runPython runs python with args and stdin, and returns its stdout.
func runPython(t *testing.T, python, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), python, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python %v: %v: %s", args, err, stderr.String())
	}
	return string(out)
}

// TestAStageInPythonPathways: the Python stage publishes its pathway
// windows to the pathways topic as the Go processes do, so that the view
// `kretrieve pathways` reads from the topic (ops/status) holds its hop:
// retrieval's out, the Python stage's in (retrieval.candidates → rescore)
// and out, and enrichment's in (retrieval.rescored → enrichment) are one
// chain of one pathway tree, each hop counting every request; completeness
// finds every request ended and none unfinished; a record it dead-letters
// and one past its deadline end their pathways at its dead-letter and
// expired checkpoints; and the stage publishes a final window when stopped
// (SIGTERM), its windows summing to each measurement once.
func TestAStageInPythonPathways(t *testing.T) {
	h := newHarness(t, 2)
	stages, err := pipeline.InsertStage(pipeline.DefaultStages(messages.DefaultTopics()), messages.StageRetrieval, pipeline.ExternalStage("rescore", "retrieval.rescored"))
	if err != nil {
		t.Fatal(err)
	}
	h.cfg.Stages = stages
	if err := h.pipeline().EnsureTopics(t.Context()); err != nil {
		t.Fatal(err)
	}
	publishGoPathways(t, h)
	sink := httptest.NewServer(&otlpJSONSink{})
	t.Cleanup(sink.Close)
	pyOut, stopPy := startPythonStage(t, h.cfg.Kafka.Brokers[0], sink.URL, "KRETRIEVE_PATHWAYS_INTERVAL=100ms")
	h.startWorkers()
	queries := []string{"compress data with gzip", "parse a URL query string", "encode JSON", "sort a slice", "read a file", "http client timeout"}
	for _, out := range sendAndWait(t, h.client(true), queries) {
		if out.Failed {
			t.Fatalf("request %s: outcome %+v (python stage said:\n%s)", out.RequestID, out, pyOut.String())
		}
	}
	src, err := status.New(status.Config{Topology: h.cfg.Topology(), KafkaOptions: h.pipeline().ClientOptions(), UnfinishedAfter: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	n := uint64(len(queries))
	path := pythonStagePath()
	var st status.Status
	// Every hop counted once per request, and every cohort judged (its
	// 5 s of origin times over): all requests entered and ended.
	done := func() bool {
		st, err = src.Read(t.Context())
		return err == nil && pathOf(st, path) == nil && st.Completeness.Entered == n && st.Completeness.Ended == n
	}
	if !poll.Wait(20*time.Second, done) {
		t.Fatalf("pathways: %v; completeness %+v; read error %v\npython stage said:\n%s", pathOf(st, path), st.Completeness, err, pyOut.String())
	}
	for i, hop := range path {
		p := rowOf(st, hop)
		if p.Total != n || p.Depth != i {
			t.Errorf("%s: total %d, depth %d; want %d records at depth %d", hop.cp.Edge(), p.Total, p.Depth, n, i)
		}
	}
	if c := st.Completeness; c.Unfinished != 0 || len(c.Cohorts) != 0 || len(c.Waiting) != 0 {
		t.Errorf("completeness: %+v, want no unfinished request", c)
	}
	t.Logf("pathway rows through Python: %s; completeness: %d entered, %d ended, %d unfinished",
		edgesOf(st, path), st.Completeness.Entered, st.Completeness.Ended, st.Completeness.Unfinished)

	checkPythonEnds(t, h, src, path[3])
	stopPy()
	if !poll.Wait(10*time.Second, func() bool { st, err = src.Read(t.Context()); return finalOf(st, pythonService) }) {
		t.Fatalf("no final window of %s after SIGTERM: instances %+v (read error %v)", pythonService, st.Instances, err)
	}
	// Its windows hold each measurement once: summed over all of them,
	// each of its series measured every request, with positive latencies.
	sums := pythonWindowSums(t, h)
	for _, hop := range path[3:5] {
		s := sums[seriesKey(hop)]
		if s.Edge.Count != n || s.Origin.Count != n || s.Edge.Sum <= 0 || s.Origin.Sum < s.Edge.Sum || s.Edge.Quantile(0.5) <= 0 {
			t.Errorf("%s over the Python stage's windows: edge %+v, origin %+v; want %d measurements each", hop.cp.Edge(), s.Edge, s.Origin, n)
		}
	}
}

// pythonWindowSums reads every window of the Python stage from the
// pathways topic, up to its final one, and sums their measurements by
// series.
func pythonWindowSums(t *testing.T, h *harness) map[seriesKey]pathwaytopic.Series {
	t.Helper()
	c, err := kgo.NewClient(append(h.pipeline().ClientOptions(), kgo.ConsumeTopics(pathwaytopic.DefaultTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sums := map[seriesKey]pathwaytopic.Series{}
	windows := 0
	for final := false; !final; {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("reading %s after %d windows of the Python stage: %v", pathwaytopic.DefaultTopic, windows, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			w, err := pathwaytopic.Decode(r.Key, r.Value)
			if err != nil {
				t.Errorf("window %q refused: %v", r.Key, err)
			}
			if err != nil || w.Service != pythonService {
				return
			}
			windows++
			final = final || w.Final
			for _, s := range w.Series {
				k := seriesKey{s.Checkpoint, s.Hash, s.Parent}
				sum := sums[k]
				sum.Edge.Merge(s.Edge)
				sum.Origin.Merge(s.Origin)
				sums[k] = sum
			}
		})
	}
	t.Logf("%d windows of the Python stage", windows)
	return sums
}

// checkPythonEnds writes two records without a pathway header to the
// Python stage's input: one it cannot decode, one past its deadline. The
// stage starts their pathway at its in checkpoint (from) and ends it at
// its dead letter's out checkpoint and at its expired checkpoint, which the
// view then holds once each.
func checkPythonEnds(t *testing.T, h *harness, src *status.Source, from hop) {
	t.Helper()
	records := []*kgo.Record{
		{Topic: from.cp.Topic, Value: []byte("not json")},
		{Topic: from.cp.Topic, Value: []byte(`{"query":"late","candidates":[]}`), Headers: []kgo.RecordHeader{{Key: messages.HeaderDeadline, Value: []byte("1")}}},
	}
	if err := rawProducer(t, h).ProduceSync(t.Context(), records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	in := chain(0, from.cp)[0]
	dlq, expired := from.cp, from.cp
	dlq.Topic, dlq.Direction = messages.DLQTopic(from.cp.Topic), pathway.Out
	expired.Direction = pathway.Expired
	want := map[hop]uint64{in: 2, chain(in.hash, dlq)[0]: 1, chain(in.hash, expired)[0]: 1}
	var st status.Status
	ended := func() bool {
		st, _ = src.Read(t.Context())
		for hop, n := range want {
			if rowOf(st, hop).Total != n {
				return false
			}
		}
		return true
	}
	if !poll.Wait(10*time.Second, ended) {
		t.Errorf("a dead letter and an expired record of the Python stage: rows %s; want %d, %d, %d", edgesOf(st, nil), 2, 1, 1)
	}
}

// publishGoPathways publishes the pathway windows of the harness's Go
// processes (workers and request client) every 100 ms until the test ends.
func publishGoPathways(t *testing.T, h *harness) {
	t.Helper()
	client, err := kgo.NewClient(h.pipeline().ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	if err := pathwaytopic.EnsureTopic(t.Context(), client, 1, pathwaytopic.DefaultTopic); err != nil {
		t.Fatal(err)
	}
	pub, err := pathwaytopic.NewPublisher(client, h.metrics, pathwaytopic.WithInterval(100*time.Millisecond), pathwaytopic.WithService("kretrieve"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = pub.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// rowOf returns the status's pathway row of hop (zero when none).
func rowOf(st status.Status, hop hop) status.Pathway {
	for _, p := range st.Pathways {
		if p.Checkpoint == hop.cp && p.Hash == hop.hash && p.Parent == hop.parent {
			return p
		}
	}
	return status.Pathway{}
}

// pathOf returns an error naming the first hop of path missing from the
// status's pathway rows, or counted differently from the first hop.
func pathOf(st status.Status, path []hop) error {
	want := rowOf(st, path[0]).Total
	for _, hop := range path {
		if p := rowOf(st, hop); p.Total == 0 || p.Total != want {
			return fmt.Errorf("%s (%s): %d records, want %d; rows %s", hop.cp.Edge(), pathway.HashString(hop.hash), p.Total, want, edgesOf(st, nil))
		}
	}
	return nil
}

// edgesOf lists the status's pathway rows (those of path, when given) as
// "edge (depth, total)".
func edgesOf(st status.Status, path []hop) string {
	var out []string
	for _, p := range st.Pathways {
		if path == nil || slices.ContainsFunc(path, func(h hop) bool { return h.hash == p.Hash && h.cp == p.Checkpoint }) {
			out = append(out, fmt.Sprintf("%s (depth %d, %d)", p.Checkpoint.Edge(), p.Depth, p.Total))
		}
	}
	return strings.Join(out, "; ")
}

// finalOf reports whether the status holds a final window of service.
func finalOf(st status.Status, service string) bool {
	return slices.ContainsFunc(st.Instances, func(i pathwaytopic.Instance) bool { return i.Service == service && i.Final })
}
