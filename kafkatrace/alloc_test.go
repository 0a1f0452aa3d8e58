// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestUnsampledRecordAllocatesNothing: under WithParentBasedSampling, a
// record whose plain W3C traceparent says "not sampled" allocates nothing
// in the Tracer's hooks, with metrics and with or without pathways: not in
// StartProcess and EndProcess, not in the produce hooks of a record
// produced under the context StartProcess returned. The contexts come from
// slabs, one allocation per 64 records, which AllocsPerRun's integer
// average over more runs than that counts as 0.
func TestUnsampledRecordAllocatesNothing(t *testing.T) {
	const runs = 1000
	for _, pathways := range []bool{true, false} {
		name := "pathways"
		opts := []Option{WithParentBasedSampling(), WithConsumerGroup("g"), WithClientID("c"), WithServerAddress("127.0.0.1:9092")}
		if pathways {
			opts = append(opts, WithPathways("svc"))
		} else {
			name = "no-pathways"
		}
		t.Run(name, func(t *testing.T) {
			tr, rec := newSampledTracer(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), opts...)
			in := unsampledConsumed()
			out := &kgo.Record{Topic: "res", Partition: 2, Key: in.Key, Value: in.Value}

			// Warm the per-partition caches and pathway series, and
			// check the fast path is the one measured.
			ctx, span, qw := tr.StartProcess(context.Background(), in, 20)
			if _, ok := ctx.(*recordContext); !ok {
				t.Fatalf("StartProcess returned %T, not the slab-allocated context", ctx)
			}
			out.Headers, out.Context = nil, ctx
			tr.OnProduceRecordBuffered(out)
			if _, ok := out.Context.(*sendContext); !ok {
				t.Fatalf("produce hook set %T, not the slab-allocated send context", out.Context)
			}
			tr.OnProduceRecordUnbuffered(out, nil)
			if got := pathwayHeaders(out); pathways != (len(got) == 1) {
				t.Fatalf("%d pathway headers on the produced record", len(got))
			}
			tr.EndProcess(ctx, in, qw.End, span, nil, "")

			if n := testing.AllocsPerRun(runs, func() {
				ctx, span, qw := tr.StartProcess(context.Background(), in, 20)
				tr.EndProcess(ctx, in, qw.End, span, nil, "")
			}); n != 0 {
				t.Errorf("StartProcess+EndProcess: %v allocations per record", n)
			}
			if n := testing.AllocsPerRun(runs, func() {
				out.Headers, out.Context = nil, ctx
				tr.OnProduceRecordBuffered(out)
				tr.OnProduceRecordUnbuffered(out, nil)
			}); n != 0 {
				t.Errorf("OnProduceRecordBuffered+OnProduceRecordUnbuffered: %v allocations per record", n)
			}
			if n := len(rec.Ended()); n != 0 {
				t.Errorf("%d spans ended for unsampled records", n)
			}
		})
	}
}
