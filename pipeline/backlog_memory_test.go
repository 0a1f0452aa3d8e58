// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
)

// Shape of the backlog and of the observation.
const (
	// backlogRecords is how many requests wait when the worker starts.
	backlogRecords = 1_000_000
	// backlogPartitions is the request topic's partition count.
	backlogPartitions = 6
	// backlogChunk is how many records of one partition one ProduceSync
	// call writes: about one 1 MiB batch.
	backlogChunk = 10_000
	// backlogWindow is how long the worker is watched.
	backlogWindow = 15 * time.Second
	// backlogTail is the end of the window in which the worker must
	// still commit progress.
	backlogTail = 3 * time.Second
)

// workerFetchMaxBytes is the worker's default consumers.Config.FetchMaxBytes
// (kgo.FetchMaxBytes), from which the test derives its heap bound.
const workerFetchMaxBytes = 16 << 20

// backlogQueries are queries the demo index answers.
var backlogQueries = []string{"gzip", "sha256", "tar archive", "encode json", "parse a URL", "regular expression"}

// TestBacklogKeepsWorkerMemoryBounded proves that a retrieval worker facing
// a backlog of 1,000,000 requests on six partitions keeps a bounded Go heap
// and serves every partition from the start.
//
// The backlog is produced (uncompressed, evenly over the partitions) before
// the worker starts, so it faces all of it at once. The worker runs as a
// separate process (startChildWith) that reports its Go heap every 100 ms
// after a baseline taken with a forced GC before it joins its group. For
// backlogWindow the test reads those reports and the group's committed
// offsets, then asserts that
//
//   - the live heap (/gc/heap/live:bytes, what the last GC found reachable)
//     never exceeds the baseline plus the allowance derived below;
//   - every partition's committed offset advanced from 0, i.e. its lag fell
//     below its start (all partitions are served in parallel, none waits for
//     another to drain), and the partitions drained together: the least
//     advanced committed at least a quarter of what the most advanced did
//     (the worker takes the partitions in turn, so they stay within a few
//     percent of each other);
//   - the worker still committed progress in the last backlogTail;
//   - on SIGTERM it exits cleanly.
//
// The allowance: franz-go decodes the records of a batch into one slab of
// kgo.Record, and their keys and values alias the fetch response, so a
// queued record keeps its whole fetch response and its batch's slab
// reachable. One fetch response is at most FetchMaxBytes (16 MiB) of
// records of w wire bytes each, so it decodes into 16 MiB / w records of
// sizeof(kgo.Record) bytes plus a pointer each in the fetch's slices:
//
//	fetch     = 16 MiB + 16 MiB / w × (sizeof(kgo.Record) + 8)
//	          ≈ 16.8 MB + 184,000 × 168 B ≈ 47.7 MB  (w ≈ 91 B, sizeof = 160 on amd64)
//	allowance = 2 × fetch + 16 MiB ≈ 112 MB
//
// Two fetches: the one franz-go decodes and buffers until it is polled, and
// the one before it, kept alive by the records still in the partition queues
// (at most MaxPollRecords plus one more poll's worth each; a paused
// partition's buffered records are dropped, not kept). 16 MiB covers the
// outputs in flight (MaxBufferedRecords, 1,000 candidates records of a few
// hundred bytes) and the handler's working set. A worker that fetched
// without pausing full partitions would decode the backlog as fast as the
// broker serves it, far faster than it searches: the whole backlog decoded
// is 1,000,000 × (sizeof(kgo.Record) + 8 + w + a queue slot) ≈ 283 MB (the
// test checks that it is at least twice the allowance). Such a worker (the
// pause in partition.enqueue disabled, tried on a copy of the code) reached
// 296 to 307 MB of live heap in the window, its partitions 4 and 5 first
// committing only after 9 s: it fails the bound. A worker draining the
// partitions one after another fails the progress checks. The bounded
// worker peaks near one decoded fetch (about 55 MB).
//
// The child's VmHWM (peak RSS) is logged, not asserted: -race's shadow
// memory inflates it.
func TestBacklogKeepsWorkerMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("produces a backlog of 1,000,000 requests and watches a worker process for 15 s; skipped with -short")
	}
	started := time.Now()
	addr := brokertest.NewBroker(t, backlogPartitions).Addr()
	cfg := pipeline.Config{
		Kafka: kafkaclient.Config{Brokers: []string{addr}, ClientID: "test", Partitions: backlogPartitions},
	}
	if err := mustNew(t, cfg).EnsureTopics(t.Context()); err != nil {
		t.Fatal(err)
	}
	admClient, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admClient.Close)
	adm := kadm.NewClient(admClient)

	b := produceBacklog(t, addr, cfg.Topology().Requests())
	t.Logf("produced %d requests (%d value bytes, %.1f wire bytes each) in %v: %.0f records/s",
		backlogRecords, b.valueBytes, b.wireBytesPerRecord(), b.took.Round(time.Millisecond), backlogRecords/b.took.Seconds())
	ends, err := adm.ListEndOffsets(t.Context(), cfg.Topology().Requests())
	if err != nil {
		t.Fatal(err)
	}
	var end [backlogPartitions]int64
	total := int64(0)
	for p := range int32(backlogPartitions) {
		o, ok := ends.Lookup(cfg.Topology().Requests(), p)
		if !ok || o.Err != nil {
			t.Fatalf("end offset of partition %d: %v", p, o.Err)
		}
		end[p] = o.Offset
		total += o.Offset
	}
	if total != backlogRecords {
		t.Fatalf("request topic holds %d records, want %d", total, backlogRecords)
	}

	allowance, fetch := heapAllowance(b.wireBytesPerRecord())
	unbounded := int64(backlogRecords * (float64(unsafe.Sizeof(kgo.Record{})) + 8 + b.wireBytesPerRecord() + 24))
	t.Logf("allowance %s (one decoded fetch %s); the whole backlog decoded: %s", mb(allowance), mb(fetch), mb(unbounded))
	if unbounded < 2*allowance {
		t.Fatalf("the backlog (%s decoded) is not clearly larger than the allowance %s: the test could not fail", mb(unbounded), mb(allowance))
	}

	srv := otlptest.NewServer(t)
	var heap heapReports
	c := startChildWith(t, addr, srv.Endpoint(), []string{
		heapEveryEnv + "=100ms",
		// Spans at 1 %, the rate the benchmarks trace at: the span queue
		// (tracing.Setup's 64k spans) is a separate bound, not this one.
		"OTEL_TRACES_SAMPLER=parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG=0.01",
	}, heap.line)
	ready := time.Now()
	poll.Until(t, 10*time.Second, func() bool { return heap.count() > 0 }, "the child's baseline heap report")
	baseline := heap.baseline()
	bound := baseline + allowance

	// Watch the committed offsets until the window ends.
	type sample struct {
		at        time.Time
		committed [backlogPartitions]int64
		sum       int64
	}
	var (
		samples  []sample
		advanced [backlogPartitions]time.Duration // when each partition's commit first moved
	)
	sampling := time.NewTicker(250 * time.Millisecond) // the sampling interval
	defer sampling.Stop()
	for time.Since(ready) < backlogWindow {
		select {
		case <-sampling.C:
		case <-t.Context().Done():
			t.Fatal("test cancelled while watching the backlog")
		}
		offs, err := adm.FetchOffsets(t.Context(), messages.StageRetrieval)
		if err != nil {
			continue // the group may not exist yet
		}
		s := sample{at: time.Now()}
		for p := range int32(backlogPartitions) {
			if o, ok := offs.Lookup(cfg.Topology().Requests(), p); ok && o.At > 0 {
				s.committed[p] = o.At
				s.sum += o.At
				if advanced[p] == 0 {
					advanced[p] = s.at.Sub(ready)
				}
			}
		}
		samples = append(samples, s)
	}
	hwm := vmHWM(c.cmd.Process.Pid)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.wait(t, 30*time.Second); err != nil {
		t.Fatalf("worker did not exit cleanly after SIGTERM: %v\n%s", err, c.stderr.String())
	}

	maxLive, maxObjects, reports := heap.max()
	t.Logf("child heap: baseline %s, max live %s (bound %s = baseline + allowance), max objects %s, %d reports; VmHWM %s (RSS, inflated by -race)",
		mb(baseline), mb(maxLive), mb(bound), mb(maxObjects), reports, hwm)
	if len(samples) == 0 {
		t.Fatal("no committed offsets were read")
	}
	last := samples[len(samples)-1]
	var progress strings.Builder
	for p := range backlogPartitions {
		fmt.Fprintf(&progress, " p%d=%d/%d (first commit at %v)", p, last.committed[p], end[p], advanced[p].Round(10*time.Millisecond))
	}
	t.Logf("committed after %v:%s", last.at.Sub(ready).Round(time.Millisecond), progress.String())
	var firstAt time.Time
	for _, s := range samples {
		if s.sum > 0 {
			firstAt = s.at
			break
		}
	}
	if !firstAt.IsZero() && last.at.After(firstAt) {
		t.Logf("records committed: %d, %.0f records/s from the first commit on", last.sum, float64(last.sum)/last.at.Sub(firstAt).Seconds())
	}
	t.Logf("spans exported at 1 %%: %d; whole test %v", len(srv.Spans()), time.Since(started).Round(time.Millisecond))

	if reports < 10 {
		t.Errorf("only %d heap reports from the child", reports)
	}
	if maxLive > bound {
		t.Errorf("live heap reached %s, above the bound %s (baseline %s + allowance %s): the worker's memory is not bounded by its fetch and queue limits",
			mb(maxLive), mb(bound), mb(baseline), mb(allowance))
	}
	for p := range backlogPartitions {
		if last.committed[p] <= 0 {
			t.Errorf("partition %d: nothing committed in %v; its lag stayed at %d while others advanced:%s", p, backlogWindow, end[p], progress.String())
		}
	}
	lo, hi := last.committed[0], last.committed[0]
	for _, n := range last.committed {
		lo, hi = min(lo, n), max(hi, n)
	}
	if 4*lo < hi {
		t.Errorf("partitions did not drain together: the least advanced committed %d, the most advanced %d:%s", lo, hi, progress.String())
	}
	var tail sample
	for _, s := range samples {
		if last.at.Sub(s.at) >= backlogTail {
			tail = s
		}
	}
	if last.sum <= tail.sum {
		t.Errorf("no progress in the last %v of the window: %d committed then, %d at the end", backlogTail, tail.sum, last.sum)
	}
	if last.sum >= backlogRecords {
		t.Errorf("the worker drained the whole backlog (%d) in the window: it no longer tests a backlog", last.sum)
	}
}

// heapAllowance returns how much the worker's live heap may grow above its
// baseline, and the part of it one decoded fetch takes, for records of w
// wire bytes each (see TestBacklogKeepsWorkerMemoryBounded).
func heapAllowance(w float64) (allowance, fetch int64) {
	perFetch := float64(workerFetchMaxBytes) / w
	fetch = workerFetchMaxBytes + int64(perFetch*float64(unsafe.Sizeof(kgo.Record{})+8))
	return 2*fetch + 16<<20, fetch
}

// backlog describes the produced backlog.
type backlog struct {
	valueBytes int64
	took       time.Duration
}

// wireBytesPerRecord estimates a record's size in a batch: its value plus
// the record's framing (length, attributes, timestamp and offset deltas, key
// and header counts: about 8 bytes for these small records) plus its share
// of the batch header.
func (b backlog) wireBytesPerRecord() float64 {
	return float64(b.valueBytes)/backlogRecords + 8 + 61.0/backlogChunk
}

// produceBacklog writes backlogRecords requests to topic, record i to
// partition i % backlogPartitions, one goroutine per partition, each with
// ProduceSync calls of backlogChunk records of its partition, and returns
// their value bytes and how long it took.
func produceBacklog(t *testing.T, addr, topic string) backlog {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerLinger(10*time.Millisecond),
		kgo.MaxBufferedRecords(backlogPartitions*backlogChunk),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// One validated value per query, whose request id's digits are
	// patched per record.
	const idPrefix = "backlog-"
	var templates [][]byte
	for _, q := range backlogQueries {
		v, err := messages.EncodeRequest(messages.Request{RequestID: idPrefix + "0000000", Query: q, TopK: messages.DefaultTopK})
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, v)
	}
	var (
		wg         sync.WaitGroup
		mu         sync.Mutex
		firstErr   error
		valueBytes int64
	)
	start := time.Now()
	for p := range int32(backlogPartitions) {
		wg.Go(func() {
			var recs []*kgo.Record
			var n int64
			flush := func() bool {
				err := cl.ProduceSync(t.Context(), recs...).FirstErr()
				recs = recs[:0]
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, fmt.Errorf("partition %d: %w", p, err))
					mu.Unlock()
				}
				return err == nil
			}
			for i := int(p); i < backlogRecords; i += backlogPartitions {
				tpl := templates[(i/backlogPartitions)%len(templates)]
				v := bytes.Clone(tpl)
				at := bytes.Index(v, []byte(idPrefix)) + len(idPrefix)
				digits := strconv.Itoa(i)
				copy(v[at+7-len(digits):at+7], digits)
				n += int64(len(v))
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: v})
				if len(recs) == backlogChunk && !flush() {
					return
				}
			}
			if len(recs) > 0 {
				flush()
			}
			mu.Lock()
			valueBytes += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce backlog: %v", firstErr)
	}
	return backlog{valueBytes: valueBytes, took: time.Since(start)}
}

// cmpErr returns the first of a and b that is not nil.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// heapReports collects a child's "heap <live> <objects>" lines.
type heapReports struct {
	mu                  sync.Mutex
	first               int64 // the baseline's live bytes
	n                   int
	maxLive, maxObjects int64
}

// line records one line of the child's stdout.
func (h *heapReports) line(s string) {
	f := strings.Fields(s)
	if len(f) != 3 || f[0] != "heap" {
		return
	}
	live, err1 := strconv.ParseInt(f[1], 10, 64)
	objects, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		h.first = live
	}
	h.n++
	h.maxLive = max(h.maxLive, live)
	h.maxObjects = max(h.maxObjects, objects)
}

// count returns how many reports arrived.
func (h *heapReports) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// baseline returns the live heap of the first report.
func (h *heapReports) baseline() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first
}

// max returns the largest live heap and heap objects reported, and the
// number of reports.
func (h *heapReports) max() (live, objects int64, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.maxLive, h.maxObjects, h.n
}

// vmHWM returns the VmHWM line of a process's /proc status, or why not.
func vmHWM(pid int) string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for l := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "no VmHWM"
}

// mb formats a byte count in MB.
func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
