// SPDX-License-Identifier: Apache-2.0

package runsummary_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/ops/runsummary"
)

// startedSpan is the little of a ReadWriteSpan that OnStart reads.
type startedSpan struct {
	sdktrace.ReadWriteSpan
	name string
	sc   trace.SpanContext
}

func (s startedSpan) Name() string                   { return s.name }
func (s startedSpan) SpanContext() trace.SpanContext { return s.sc }

// benchRequest is one request's spans as the SDK hands them to processors.
type benchRequest struct {
	root  sdktrace.ReadWriteSpan // for OnStart
	spans []sdktrace.ReadOnlySpan
}

// pipelineSpanNames are the 14 spans of a request in `kretrieve run`, in end
// order (the root ends before the result's process span).
var pipelineSpanNames = []string{
	"send retrieval.requests", "wait retrieval.requests", "search", "send retrieval.candidates", "process retrieval.requests",
	"wait retrieval.candidates", "load documents", "dedupe", "rerank", "send retrieval.results", "process retrieval.candidates",
	"wait retrieval.results", "request", "process retrieval.results",
}

func benchRequests(n int) []benchRequest {
	base := time.Now()
	out := make([]benchRequest, n)
	for i := range out {
		var tid trace.TraceID
		binary.BigEndian.PutUint64(tid[8:], uint64(i+1))
		span := func(j int) trace.SpanContext {
			var sid trace.SpanID
			binary.BigEndian.PutUint64(sid[:], uint64(i*100+j+1))
			return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
		}
		rootSC := span(len(pipelineSpanNames))
		d := time.Duration(1+(i*7919)%997) * time.Millisecond // varied, so the slowest changes now and then
		for j, name := range pipelineSpanNames {
			stub := tracetest.SpanStub{Name: name, SpanContext: span(j), Parent: rootSC, StartTime: base, EndTime: base.Add(d / 2)}
			if name == "request" {
				stub.SpanContext, stub.Parent = rootSC, trace.SpanContext{}
				stub.EndTime = base.Add(d)
				stub.Attributes = []attribute.KeyValue{attribute.String("kretrieve.request.outcome", "completed")}
			}
			out[i].spans = append(out[i].spans, stub.Snapshot())
		}
		out[i].root = startedSpan{name: "request", sc: rootSC}
	}
	return out
}

// BenchmarkRecorder measures the Recorder per span, as the SDK calls it for
// a request of `kretrieve run` (14 spans: one OnStart that matters, the
// others return at once, and 14 OnEnd), with and without keeping the
// slowest requests' spans.
func BenchmarkRecorder(b *testing.B) {
	reqs := benchRequests(512)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		opts []runsummary.Option
	}{
		{"histograms only", []runsummary.Option{runsummary.WithKeepSlowest(0)}},
		{"keep slowest", nil},
		{"keep 100 slowest", []runsummary.Option{runsummary.WithKeepSlowest(100)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rec := runsummary.NewRecorder("request", "kretrieve.request.outcome", bc.opts...)
			other := startedSpan{name: "send retrieval.requests"}
			var ro sdktrace.ReadWriteSpan = other
			b.ReportAllocs()
			b.ResetTimer()
			spans := 0
			for i := 0; b.Loop(); i++ {
				r := reqs[i%len(reqs)]
				rec.OnStart(ctx, r.root)
				for range len(r.spans) - 1 {
					rec.OnStart(ctx, ro)
				}
				for _, s := range r.spans {
					rec.OnEnd(s)
				}
				spans += len(r.spans)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
		})
	}
}
