// SPDX-License-Identifier: Apache-2.0

package docfeed_test

import (
	"context"
	"fmt"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/search"
)

// The benchmarks of issue 24, item 6 (targets in bench/benchratio): how
// fast documents get through Kafka into a worker's index against the
// offline build, how fresh they are, what ingesting costs searches, and
// how soon a restarted worker is ready. They use the Go corpus and an
// in-process broker; a follower's index is on disk, as workers' are.

var (
	goCorpusOnce sync.Once
	goCorpus     []search.Document
	goCorpusErr  error
)

// goDocs returns the Go corpus, copies times (ids made distinct).
func goDocs(b *testing.B, copies int) []search.Document {
	b.Helper()
	goCorpusOnce.Do(func() { goCorpus, goCorpusErr = corpus.GoStdlib(context.Background(), "") })
	if goCorpusErr != nil {
		b.Fatal(goCorpusErr)
	}
	if copies == 1 {
		return goCorpus
	}
	out := make([]search.Document, 0, copies*len(goCorpus))
	for c := range copies {
		for _, d := range goCorpus {
			d.ID = fmt.Sprintf("%s#%d", d.ID, c)
			if d.ImportPath != "" {
				d.ImportPath = fmt.Sprintf("%s#%d", d.ImportPath, c)
			}
			out = append(out, d)
		}
	}
	return out
}

// benchEnv is a broker with a six-partition documents topic, whose
// followers apply batches of the default size.
func benchEnv(b *testing.B) *env {
	e := newEnv(b, 6)
	e.maxBatch = 0
	return e
}

// publishAll publishes docs, keyed by id, and waits for them all.
func publishAll(b *testing.B, e *env, docs []search.Document) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ProducerBatchMaxBytes(2<<20), kgo.MaxBufferedRecords(20000))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	var failed atomic.Int64
	for _, d := range docs {
		v, err := corpus.EncodeDocument(d)
		if err != nil {
			b.Fatal(err)
		}
		cl.Produce(context.Background(), &kgo.Record{Topic: topic, Key: []byte(d.ID), Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
		})
	}
	if err := cl.Flush(context.Background()); err != nil || failed.Load() > 0 {
		b.Fatalf("publish: %v, %d failed", err, failed.Load())
	}
}

// heapPeak samples the heap's live objects every 10 ms until stopped and
// returns the peak's growth over the first sample, in MiB.
func heapPeak() (stop func() float64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(s); return s[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() float64 {
		close(done)
		wg.Wait()
		return float64(peak.Load()-min(base, peak.Load())) / (1 << 20)
	}
}

// BenchmarkIngest compares a new worker catching up from a topic of the
// Go corpus (kafka; 12 copies, about 100,000 documents: kafka-100k) with
// the offline build of the same documents (offline, offline-100k), in
// documents per second and seconds, with the catch-up's peak heap growth.
func BenchmarkIngest(b *testing.B) {
	for _, c := range []struct {
		name   string
		copies int
	}{{"", 1}, {"-100k", 12}} {
		docs := goDocs(b, c.copies)
		b.Run("offline"+c.name, func(b *testing.B) {
			for range b.N {
				start := time.Now()
				if err := search.Build(context.Background(), b.TempDir()+"/index", "bench", docs); err != nil {
					b.Fatal(err)
				}
				report(b, len(docs), time.Since(start))
			}
		})
		b.Run("kafka"+c.name, func(b *testing.B) {
			e := benchEnv(b)
			publishAll(b, e, docs)
			b.ResetTimer()
			for range b.N {
				peak := heapPeak()
				start := time.Now()
				f := e.startWith("bench", b.TempDir()+"/index", nil)
				f.waitReady(b)
				took := time.Since(start)
				if n := f.Index().Len(); n != len(docs) {
					b.Fatalf("%d documents applied, want %d", n, len(docs))
				}
				b.ReportMetric(peak(), "peak-MiB")
				f.stop()
				report(b, len(docs), took)
			}
		})
	}
}

// report reports documents per second and seconds.
func report(b *testing.B, docs int, took time.Duration) {
	b.ReportMetric(float64(docs)/took.Seconds(), "docs/s")
	b.ReportMetric(took.Seconds(), "s")
}

// BenchmarkFreshness measures publication to searchable (the wait span of
// each document applied, what the pathway edge records) at idle (one
// document at a time) and while 500 documents/s are published.
func BenchmarkFreshness(b *testing.B) {
	for _, c := range []struct {
		name string
		rate int // documents per second; 0: one at a time
	}{{"idle", 0}, {"500-per-s", 500}} {
		b.Run(c.name, func(b *testing.B) {
			e := benchEnv(b)
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			f := e.startWith("bench", "", kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithConsumerGroup("bench")))
			f.waitReady(b)
			const n = 1000
			b.ResetTimer()
			for i := range b.N {
				docs := make([]search.Document, n)
				for j := range docs {
					docs[j] = doc(fmt.Sprintf("f%d-%d", i, j), "freshness")
				}
				publishPaced(b, e, docs, c.rate, f)
			}
			b.StopTimer()
			var waits []time.Duration
			for _, s := range rec.Ended() {
				if s.Name() == "wait "+topic {
					waits = append(waits, s.EndTime().Sub(s.StartTime()))
				}
			}
			reportPercentiles(b, waits, time.Millisecond, "ms")
		})
	}
}

// publishPaced publishes docs at rate per second (0: each once the one
// before is applied) and waits until the last is applied.
func publishPaced(b *testing.B, e *env, docs []search.Document, rate int, f *follower) {
	b.Helper()
	var tick *time.Ticker
	if rate > 0 {
		tick = time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
	}
	for _, d := range docs {
		v, err := corpus.EncodeDocument(d)
		if err != nil {
			b.Fatal(err)
		}
		r := &kgo.Record{Topic: topic, Key: []byte(d.ID), Value: v}
		if rate == 0 {
			if err := e.producer.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				b.Fatal(err)
			}
			waitApplied(b, f, d.ID)
			continue
		}
		e.producer.Produce(context.Background(), r, nil)
		<-tick.C
	}
	waitApplied(b, f, docs[len(docs)-1].ID)
}

// waitApplied waits until f's index holds id.
func waitApplied(b *testing.B, f *follower, id string) {
	if !poll.WaitEvery(30*time.Second, 100*time.Microsecond, func() bool { return f.has(id) }) {
		b.Fatalf("%s not applied within 30 s", id)
	}
}

// reportPercentiles reports the p50 and p99 of ds in unit.
func reportPercentiles(b *testing.B, ds []time.Duration, unit time.Duration, name string) {
	if len(ds) == 0 {
		b.Fatal("nothing measured")
	}
	slices.Sort(ds)
	at := func(q int) float64 { return float64(ds[min(len(ds)*q/100, len(ds)-1)]) / float64(unit) }
	b.ReportMetric(at(50), "p50-"+name)
	b.ReportMetric(at(99), "p99-"+name)
}

// benchQueries are the searches of BenchmarkSearchWhileIngesting.
var benchQueries = strings.Fields("gzip reader writer parse url query string json encode decode " +
	"context cancel timeout mutex lock http server client template execute time duration format")

// BenchmarkSearchWhileIngesting compares the p99 of searches on a worker's
// index of the Go corpus at idle and while 500 documents/s are applied.
func BenchmarkSearchWhileIngesting(b *testing.B) {
	for _, ingesting := range []bool{false, true} {
		name := map[bool]string{false: "idle", true: "ingesting"}[ingesting]
		b.Run(name, func(b *testing.B) {
			e := benchEnv(b)
			docs := goDocs(b, 1)
			publishAll(b, e, docs)
			f := e.startWith("bench", "", nil)
			f.waitReady(b)
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			if ingesting {
				wg.Go(func() { updateLoop(ctx, e, docs, 500) })
			}
			const n = 3000
			lat := make([]time.Duration, 0, n*b.N)
			b.ResetTimer()
			for i := range n * b.N {
				start := time.Now()
				if _, err := f.Index().Search(context.Background(), benchQueries[i%len(benchQueries)], 10); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			stop()
			wg.Wait()
			if ingesting && f.Status().Applied <= int64(len(docs)) {
				b.Fatal("no document applied while searching")
			}
			reportPercentiles(b, lat, time.Microsecond, "µs")
		})
	}
}

// updateLoop publishes changed versions of docs at rate per second until
// ctx is done.
func updateLoop(ctx context.Context, e *env, docs []search.Document, rate int) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		d := docs[(i*7919)%len(docs)]
		d.Body += fmt.Sprintf(" (revision %d)", i)
		v, err := corpus.EncodeDocument(d)
		if err == nil {
			e.producer.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(d.ID), Value: v}, nil)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// BenchmarkRestartReady measures how soon a worker restarted on its
// on-disk index, current with the topic (the Go corpus), is ready.
func BenchmarkRestartReady(b *testing.B) {
	e := benchEnv(b)
	publishAll(b, e, goDocs(b, 1))
	dir := b.TempDir() + "/index"
	f := e.startWith("bench", dir, nil)
	f.waitReady(b)
	f.stop()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		g := e.startWith("bench", dir, nil)
		g.waitReady(b)
		took := time.Since(start)
		if s := g.Status(); s.Applied != 0 || s.Documents != len(goCorpus) {
			b.Fatalf("restarted: %+v, want nothing applied again", s)
		}
		g.stop()
		b.ReportMetric(float64(took.Microseconds())/1000, "ms")
	}
}
