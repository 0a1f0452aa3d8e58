// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// hopTracer returns a worker's Tracer as kretrieve runs it at low sampling:
// parent-based sampling, metrics, a consumer group, and pathways when
// pathways is set.
func hopTracer(b *testing.B, pathways bool) *Tracer {
	var opts []Option
	opts = append(opts, WithParentBasedSampling())
	if pathways {
		opts = append(opts, WithPathways("bench"))
	}
	return benchTracer(b, sdktrace.ParentBased(sdktrace.AlwaysSample()), opts...)
}

// unsampledConsumed returns a consumed record of an unsampled trace, as a
// worker fetches it from upstream: a plain W3C traceparent (flags 00) and
// the pathway header its producer wrote a millisecond ago.
func unsampledConsumed() *kgo.Record {
	now := time.Now()
	var ph [pathway.Size]byte
	pathway.Context{Hash: 0x0123456789abcdef, Origin: now.Add(-2 * time.Millisecond).UnixNano(), Prev: now.Add(-time.Millisecond).UnixNano()}.Encode(&ph)
	return &kgo.Record{
		Topic: "retrieval.requests", Partition: 1, Offset: 10, Key: []byte("k"), Value: make([]byte, 300), Timestamp: now,
		Headers: []kgo.RecordHeader{
			{Key: tracecontext.TraceparentHeader, Value: []byte(unsampledParent)},
			{Key: pathway.HeaderKey, Value: ph[:]},
		},
	}
}

// produced resets out, a record reused for every produce, to what a
// handler hands to Produce: no headers, ctx as its context.
func produced(ctx context.Context, out *kgo.Record) {
	out.Headers, out.Context = nil, ctx
}

// benchmarkDifference runs off and on b.N times each, alternating in
// chunks so that both see the same machine, with b's timer and allocation
// count running only while on runs: ns/op, B/op and allocs/op are on's.
// It reports on's time minus off's per operation as unit, and off's time
// as off-ns/op.
func benchmarkDifference(b *testing.B, unit string, off, on func()) {
	const chunk = 1024
	var offTime, onTime time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		b.StopTimer()
		start := time.Now()
		for range n {
			off()
		}
		offTime += time.Since(start)
		b.StartTimer()
		start = time.Now()
		for range n {
			on()
		}
		onTime += time.Since(start)
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(onTime-offTime)/float64(b.N), unit)
	b.ReportMetric(float64(offTime)/float64(b.N), "off-ns/op")
}

// BenchmarkCheckpointIn measures the in checkpoint of an unsampled record:
// StartProcess then EndProcess of a record carrying a plain unsampled
// traceparent and an upstream pathway header, by a worker with metrics and
// parent-based sampling, with pathways (ns/op, allocs/op) and without
// (off-ns/op), interleaved. ns/checkpoint is the difference: what the
// pathway adds per record at one consumer.
func BenchmarkCheckpointIn(b *testing.B) {
	off, on := hopTracer(b, false), hopTracer(b, true)
	r := unsampledConsumed()
	process := func(tr *Tracer) func() {
		return func() {
			ctx, span, qw := tr.StartProcess(context.Background(), r, 20)
			tr.EndProcess(ctx, r, qw.End, span, nil, "")
		}
	}
	benchmarkDifference(b, "ns/checkpoint", process(off), process(on))
}

// BenchmarkCheckpointOut measures the out checkpoint of an unsampled
// record: the two produce hooks (OnProduceRecordBuffered, then
// OnProduceRecordUnbuffered as at the broker's ack) of a record produced
// under the context StartProcess returned for an unsampled consumed record,
// with pathways and without, as BenchmarkCheckpointIn does. ns/checkpoint is
// what the pathway adds per produced record: the out checkpoint and its
// header.
func BenchmarkCheckpointOut(b *testing.B) {
	off, on := hopTracer(b, false), hopTracer(b, true)
	in := unsampledConsumed()
	send := func(tr *Tracer) func() {
		ctx, span, qw := tr.StartProcess(context.Background(), in, 20)
		b.Cleanup(func() { tr.EndProcess(ctx, in, qw.End, span, nil, "") })
		out := &kgo.Record{Topic: "retrieval.candidates", Partition: 2, Key: in.Key, Value: in.Value}
		return func() {
			produced(ctx, out)
			tr.OnProduceRecordBuffered(out)
			tr.OnProduceRecordUnbuffered(out, nil)
		}
	}
	benchmarkDifference(b, "ns/checkpoint", send(off), send(on))
}

// BenchmarkUnsampledHooks measures one whole hop of an unsampled record
// through the Tracer's hooks, with pathways and metrics on: StartProcess,
// the produce hooks of one record produced under the returned context,
// EndProcess. Nothing is allocated per record: the contexts come from slabs
// (one allocation per 64 records, which allocs/op rounds to 0).
func BenchmarkUnsampledHooks(b *testing.B) {
	for _, v := range []struct {
		name     string
		pathways bool
	}{{"pathways", true}, {"no-pathways", false}} {
		b.Run(v.name, func(b *testing.B) {
			tr := hopTracer(b, v.pathways)
			in := unsampledConsumed()
			out := &kgo.Record{Topic: "retrieval.candidates", Partition: 2, Key: in.Key, Value: in.Value}
			b.ReportAllocs()
			for b.Loop() {
				ctx, span, qw := tr.StartProcess(context.Background(), in, 20)
				produced(ctx, out)
				tr.OnProduceRecordBuffered(out)
				tr.OnProduceRecordUnbuffered(out, nil)
				tr.EndProcess(ctx, in, qw.End, span, nil, "")
			}
		})
	}
}
