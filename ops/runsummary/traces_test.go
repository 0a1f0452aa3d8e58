// SPDX-License-Identifier: Apache-2.0

package runsummary_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/ops/spans"
)

// request records one request as the pipeline does: a root span lasting d,
// send/wait/process inside it, and the result's process span ending after
// the root (as the collector's does). It returns the trace id and the names
// of its spans.
func request(tr trace.Tracer, base time.Time, d time.Duration, outcome string) (string, []string) {
	ctx, root := tr.Start(context.Background(), "request", trace.WithTimestamp(base))
	at := func(f float64) trace.SpanEventOption {
		return trace.WithTimestamp(base.Add(time.Duration(f * float64(d))))
	}
	sctx, send := tr.Start(ctx, "send topic-a", trace.WithTimestamp(base.Add(d/10)), trace.WithSpanKind(trace.SpanKindProducer))
	send.End(at(0.2))
	_, wait := tr.Start(sctx, "wait topic-a", trace.WithTimestamp(base.Add(d/10)))
	wait.End(at(0.5))
	_, proc := tr.Start(sctx, "process topic-a", trace.WithTimestamp(base.Add(d/2)), trace.WithSpanKind(trace.SpanKindConsumer))
	proc.End(at(0.9))
	_, late := tr.Start(sctx, "process results", trace.WithTimestamp(base.Add(d*9/10)))
	root.SetAttributes(attribute.String("outcome", outcome))
	root.End(at(1))
	late.End(at(1.01))
	return root.SpanContext().TraceID().String(), []string{"request", "send topic-a", "wait topic-a", "process topic-a", "process results"}
}

func TestRecorderKeepsTheSlowestRequests(t *testing.T) {
	rec := runsummary.NewRecorder("request", "outcome", runsummary.WithKeepSlowest(3))
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t")
	base := time.Now()
	durations := []int{40, 7, 93, 12, 93 - 1, 55, 3, 71, 88, 20}
	ids := map[int]string{}
	var names []string
	for _, ms := range durations {
		ids[ms], names = request(tr, base, time.Duration(ms)*time.Millisecond, "completed")
	}
	// Slower than all, but it timed out: not end-to-end, not kept.
	timedOut, _ := request(tr, base, time.Second, "timeout")

	got := rec.Traces()
	want := []int{93, 92, 88}
	if len(got) != len(want) {
		t.Fatalf("%d traces kept, want %d", len(got), len(want))
	}
	for i, ms := range want {
		tr := got[i]
		if tr.TraceID != ids[ms] || tr.TraceID == timedOut || math.Abs(tr.DurationMS-float64(ms)) > 1e-6 {
			t.Fatalf("trace %d: %s %.3f ms, want %s %d ms", i, tr.TraceID, tr.DurationMS, ids[ms], ms)
		}
		var gotNames []string
		for _, s := range tr.Spans {
			if s.TraceID != tr.TraceID {
				t.Fatalf("trace %s holds span %s of trace %s", tr.TraceID, s.Name, s.TraceID)
			}
			gotNames = append(gotNames, s.Name)
		}
		// In start order, including the span that ended after the root.
		if !reflect.DeepEqual(gotNames, names) {
			t.Fatalf("trace %d spans %v, want %v", i, gotNames, names)
		}
	}

	s := rec.Summary(runsummary.Requests{}, time.Second, nil, nil)
	if s.Slowest == nil || !reflect.DeepEqual(*s.Slowest, got[0]) {
		t.Fatalf("summary slowest %+v, want %+v", s.Slowest, got[0])
	}
	// The slowest is the end-to-end maximum (to the histogram's precision).
	if math.Abs(s.Slowest.DurationMS-s.EndToEndMS.Max) > s.EndToEndMS.Max*0.001 {
		t.Fatalf("slowest %.3f ms, end-to-end max %.3f ms", s.Slowest.DurationMS, s.EndToEndMS.Max)
	}
	var text bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "slowest request: trace "+ids[93]+"  93.00 ms") || !strings.Contains(text.String(), "  wait topic-a") {
		t.Fatalf("text:\n%s", text.String())
	}
}

func TestRecorderBoundsWhatItKeeps(t *testing.T) {
	rec := runsummary.NewRecorder("request", "", runsummary.WithMaxInFlightTraces(2), runsummary.WithMaxSpansPerTrace(3))
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t")
	base := time.Now()
	var roots []trace.Span
	var ctxs []context.Context
	for range 3 {
		ctx, root := tr.Start(context.Background(), "request", trace.WithTimestamp(base))
		roots, ctxs = append(roots, root), append(ctxs, ctx)
	}
	for i, ctx := range ctxs {
		for range 4 {
			_, s := tr.Start(ctx, "search", trace.WithTimestamp(base))
			s.End(trace.WithTimestamp(base.Add(time.Millisecond)))
		}
		roots[i].End(trace.WithTimestamp(base.Add(time.Duration(10*(i+1)) * time.Millisecond)))
	}
	s := rec.Summary(runsummary.Requests{}, time.Second, nil, nil)
	// The third request started with two in flight: not tracked, although
	// it was the slowest. The first two kept 3 of their 5 spans each.
	if s.UntrackedTraces != 1 || s.TruncatedSpans != 4 {
		t.Fatalf("untracked %d truncated %d", s.UntrackedTraces, s.TruncatedSpans)
	}
	if s.Slowest == nil || s.Slowest.TraceID != roots[1].SpanContext().TraceID().String() || len(s.Slowest.Spans) != 3 {
		t.Fatalf("slowest %+v", s.Slowest)
	}
	// Finished requests free their place: a new one is tracked.
	_, root := tr.Start(context.Background(), "request", trace.WithTimestamp(base))
	root.End(trace.WithTimestamp(base.Add(time.Second)))
	if s := rec.Summary(runsummary.Requests{}, time.Second, nil, nil); s.UntrackedTraces != 1 || s.Slowest.TraceID != root.SpanContext().TraceID().String() {
		t.Fatalf("after the cap: untracked %d slowest %s", s.UntrackedTraces, s.Slowest.TraceID)
	}

	off := runsummary.NewRecorder("request", "", runsummary.WithKeepSlowest(0))
	tr = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(off)).Tracer("t")
	request(tr, base, time.Millisecond, "completed")
	if s := off.Summary(runsummary.Requests{}, time.Second, nil, nil); s.Slowest != nil || len(off.Traces()) != 0 || s.EndToEndMS.Count != 1 {
		t.Fatalf("keep 0: %+v", s)
	}
}

func TestSpansFileRoundTrips(t *testing.T) {
	rec := runsummary.NewRecorder("request", "", runsummary.WithKeepSlowest(2))
	res := resource.NewSchemaless(semconv.ServiceName("svc-a"))
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res)).Tracer("t")
	attrs := []attribute.KeyValue{
		attribute.String("s", "x <mark>y</mark>\n\"q\""), attribute.Bool("b", true), attribute.Int64("i", math.MaxInt64),
		attribute.Float64("f", 2), attribute.Float64("nan", math.NaN()), attribute.Float64("inf", math.Inf(-1)),
		attribute.StringSlice("ss", []string{"a", ""}), attribute.BoolSlice("bs", []bool{false, true}),
		attribute.Int64Slice("is", []int64{-1, 1 << 60}), attribute.Float64Slice("fs", []float64{0.5, math.Inf(1)}),
	}
	_, other := tr.Start(context.Background(), "elsewhere")
	// Explicit timestamps: the traces last 1, 2 and 3 ms.
	base := time.Now()
	for i := range 3 {
		ctx, root := tr.Start(context.Background(), "request", trace.WithAttributes(attrs...), trace.WithTimestamp(base))
		_, child := tr.Start(ctx, "process t", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithLinks(trace.Link{SpanContext: other.SpanContext()}),
			trace.WithTimestamp(base.Add(100*time.Microsecond)))
		child.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", 2)), trace.WithTimestamp(base.Add(200*time.Microsecond)))
		child.RecordError(errors.New("boom"), trace.WithTimestamp(base.Add(300*time.Microsecond)))
		child.SetStatus(codes.Error, "boom")
		child.End(trace.WithTimestamp(base.Add(500 * time.Microsecond)))
		root.End(trace.WithTimestamp(base.Add(time.Duration(i+1) * time.Millisecond)))
	}
	other.End()

	traces := rec.Traces()
	if len(traces) != 2 {
		t.Fatalf("%d traces", len(traces))
	}
	// The two slowest are kept, slowest first.
	if traces[0].DurationMS != 3 || traces[1].DurationMS != 2 {
		t.Fatalf("kept traces of %v and %v ms, want 3 and 2", traces[0].DurationMS, traces[1].DurationMS)
	}
	var file bytes.Buffer
	if err := spans.WriteSpans(&file, traces); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(file.String(), "\n"); n != 4 {
		t.Fatalf("%d lines, want 4 (2 traces of 2 spans):\n%s", n, file.String())
	}
	read, err := spans.ReadSpans(&file)
	if err != nil {
		t.Fatal(err)
	}
	// NaN is not equal to itself: compare the file's spans by their JSON.
	back := spans.GroupTraces(read)
	if len(back) != 2 || back[0].TraceID != traces[0].TraceID || back[1].TraceID != traces[1].TraceID {
		t.Fatalf("traces read back %+v", back)
	}
	for i := range back {
		if back[i].DurationMS != traces[i].DurationMS {
			t.Errorf("trace %d duration %v, want %v", i, back[i].DurationMS, traces[i].DurationMS)
		}
		if !equalSpans(back[i].Spans, traces[i].Spans) {
			t.Errorf("trace %d:\nread  %+v\nwrote %+v", i, back[i].Spans, traces[i].Spans)
		}
	}
	root, child := back[0].Spans[0], back[0].Spans[1]
	if root.Service != "svc-a" || root.ParentSpanID != "" || child.ParentSpanID != root.SpanID || child.Kind != "consumer" || root.Kind != "internal" {
		t.Fatalf("root %+v child %+v", root, child)
	}
	if child.StatusCode != "error" || child.StatusMessage != "boom" || len(child.Events) != 2 || child.Events[0].Name != "retry" ||
		len(child.Links) != 1 || child.Links[0].SpanID != other.SpanContext().SpanID().String() {
		t.Fatalf("child %+v", child)
	}
	// Every attribute comes back with its type and value.
	for i, a := range root.Attributes {
		got, want := a.KeyValue(), attrs[i]
		if got.Key != want.Key || got.Value.Type() != want.Value.Type() || got.Value.String() != want.Value.String() {
			t.Errorf("attribute %d: %s=%s (%s), want %s=%s (%s)", i, got.Key, got.Value.String(), got.Value.Type(), want.Key, want.Value.String(), want.Value.Type())
		}
	}
}

// equalSpans compares spans treating NaN attribute values as equal.
func equalSpans(a, b []spans.Span) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if len(x.Attributes) != len(y.Attributes) {
			return false
		}
		for j := range x.Attributes {
			if x.Attributes[j].KeyValue().Value.String() != y.Attributes[j].KeyValue().Value.String() || x.Attributes[j].Type != y.Attributes[j].Type {
				return false
			}
		}
		x.Attributes, y.Attributes = nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
