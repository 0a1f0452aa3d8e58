// SPDX-License-Identifier: Apache-2.0

package lag_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/lag"
)

// TestMain checks that no goroutine (consumers, clients) outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testTopic = "lag.orders"

// fixture is a broker with testTopic (3 partitions) where the record at
// offset o of every partition has the timestamp base + o seconds, base being
// a minute ago:
//
//	partition  records  log start  group "orders"  group "audit"
//	0          10       0          committed 4      committed 7
//	1          6        2          nothing          nothing
//	2          4        0          committed 4      nothing
type fixture struct {
	broker *broker.Broker
	opts   []kgo.Opt
	base   time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	b := brokertest.NewBroker(t, 3)
	f := &fixture{broker: b, opts: []kgo.Opt{kgo.SeedBrokers(b.Addr())}, base: time.Now().Add(-time.Minute).Truncate(time.Millisecond)}
	ctx := t.Context()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if resp, err := adm.CreateTopic(ctx, 3, 1, nil, testTopic); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	var records []*kgo.Record
	for p, n := range []int{10, 6, 4} {
		for o := range n {
			records = append(records, &kgo.Record{Topic: testTopic, Partition: int32(p), Value: []byte("v"), Timestamp: f.at(int64(o))})
		}
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	deleted, err := adm.DeleteRecords(ctx, offsets(map[int32]int64{1: 2}))
	if err != nil {
		t.Fatalf("delete records: %v", err)
	}
	for _, r := range deleted.Sorted() {
		if r.Err != nil {
			t.Fatalf("delete records: %v", r.Err)
		}
	}
	commit(t, adm, "orders", map[int32]int64{0: 4, 2: 4})
	commit(t, adm, "audit", map[int32]int64{0: 7})
	return f
}

// at returns the timestamp of the record at offset o.
func (f *fixture) at(o int64) time.Time { return f.base.Add(time.Duration(o) * time.Second) }

func offsets(at map[int32]int64) kadm.Offsets {
	var os kadm.Offsets
	for p, o := range at {
		os.Add(kadm.Offset{Topic: testTopic, Partition: p, At: o, LeaderEpoch: -1})
	}
	return os
}

func commit(t *testing.T, adm *kadm.Client, group string, at map[int32]int64) {
	t.Helper()
	resp, err := adm.CommitOffsets(t.Context(), group, offsets(at))
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// want is an expected entry; oldest is the offset of the oldest unconsumed
// record, -1 when nothing lags.
type want struct {
	group                   string
	partition               int32
	committed, end, records int64
	oldest                  int64
}

// fixtureLag is the lag of the fixture's groups.
var fixtureLag = []want{
	{"audit", 0, 7, 10, 3, 7},
	{"audit", 1, -1, 6, 4, 2}, // from the log start, not from 0
	{"audit", 2, -1, 4, 4, 0},
	{"orders", 0, 4, 10, 6, 4},
	{"orders", 1, -1, 6, 4, 2},
	{"orders", 2, 4, 4, 0, -1}, // fully consumed
}

// checkEntry compares one entry with w; the entry was measured between
// before and after.
func (f *fixture) checkEntry(t *testing.T, got lag.PartitionLag, w want, before, after time.Time) {
	t.Helper()
	if got.Group != w.group || got.Topic != testTopic || got.Partition != w.partition {
		t.Fatalf("entry %+v, want group %s topic %s partition %d", got, w.group, testTopic, w.partition)
	}
	if got.Err != nil {
		t.Fatalf("%s/%d: %v", w.group, w.partition, got.Err)
	}
	if got.Committed != w.committed || got.End != w.end || got.Records != w.records {
		t.Errorf("%s/%d: committed %d end %d records %d, want %d %d %d", w.group, w.partition, got.Committed, got.End, got.Records, w.committed, w.end, w.records)
	}
	if w.oldest < 0 {
		if got.Seconds != 0 || !got.OldestTimestamp.IsZero() {
			t.Errorf("%s/%d: seconds %v oldest %v, want 0 and none", w.group, w.partition, got.Seconds, got.OldestTimestamp)
		}
		return
	}
	ts := f.at(w.oldest)
	if !got.OldestTimestamp.Equal(ts) {
		t.Errorf("%s/%d: oldest timestamp %v, want %v (offset %d)", w.group, w.partition, got.OldestTimestamp, ts, w.oldest)
	}
	const eps = 1e-6
	if lo, hi := before.Sub(ts).Seconds(), after.Sub(ts).Seconds(); got.Seconds < lo-eps || got.Seconds > hi+eps {
		t.Errorf("%s/%d: seconds %.3f, want the age of offset %d: between %.3f and %.3f", w.group, w.partition, got.Seconds, w.oldest, lo, hi)
	}
}

func TestMeasureLagInRecordsAndSeconds(t *testing.T) {
	f := newFixture(t)
	before := time.Now()
	got, err := lag.Measure(t.Context(), f.opts, "orders", "nope", "audit")
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by group: audit, nope (does not exist), orders.
	if len(got) != len(fixtureLag)+1 {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(fixtureLag)+1, got)
	}
	nope := got[3]
	if nope.Group != "nope" || nope.Topic != "" || nope.Partition != -1 || !errors.Is(nope.Err, kerr.GroupIDNotFound) {
		t.Fatalf("unknown group entry %+v, want an error entry with GROUP_ID_NOT_FOUND", nope)
	}
	got = append(got[:3], got[4:]...)
	for i, w := range fixtureLag {
		f.checkEntry(t, got[i], w, before, after)
	}
}

func TestMeasureLagOfEveryGroup(t *testing.T) {
	f := newFixture(t)
	before := time.Now()
	got, err := lag.Measure(t.Context(), f.opts)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(fixtureLag) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(fixtureLag), got)
	}
	for i, w := range fixtureLag {
		f.checkEntry(t, got[i], w, before, after)
	}
}

// TestMeasureLagIsBounded: against a broker that accepts connections and
// never answers, Measure gives up when ctx ends.
func TestMeasureLagIsBounded(t *testing.T) {
	addr := silentBroker(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start := time.Now()
	got, err := lag.Measure(ctx, []kgo.Opt{kgo.SeedBrokers(addr)}, "orders")
	if err == nil || got != nil {
		t.Fatalf("Measure against a silent broker: %+v, %v", got, err)
	}
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Fatalf("Measure returned after %s, want soon after its context ended (1s)", d)
	}
}

// silentBroker listens on a free port, accepts connections and never
// answers; it closes them when the test ends.
func silentBroker(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
