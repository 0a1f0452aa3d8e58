// SPDX-License-Identifier: Apache-2.0

package runsummary_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/ops/runsummary"
)

func TestRecorderSummary(t *testing.T) {
	rec := runsummary.NewRecorder("request", "outcome")
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tp.Tracer("t")
	base := time.Now()
	span := func(name string, d time.Duration, attrs ...attribute.KeyValue) {
		_, s := tr.Start(context.Background(), name, trace.WithTimestamp(base), trace.WithAttributes(attrs...))
		s.End(trace.WithTimestamp(base.Add(d)))
	}
	for i := 1; i <= 100; i++ {
		span("request", time.Duration(i)*time.Millisecond, attribute.String("outcome", "completed"))
		span("wait topic-a", time.Duration(i)*100*time.Microsecond)
		span("process topic-a", 2*time.Millisecond)
	}
	span("request", time.Hour, attribute.String("outcome", "timeout")) // not end-to-end
	span("search", time.Millisecond)

	s := rec.Summary(runsummary.Requests{Sent: 101, Completed: 100, TimedOut: 1}, 2*time.Second, []string{"topic-a", "topic-b"}, []string{"search"})
	if s.EndToEndMS.Count != 100 || s.EndToEndMS.P50 < 49.9 || s.EndToEndMS.P50 > 50.1 || s.EndToEndMS.P99 < 98.9 || s.EndToEndMS.Max > 100.1 {
		t.Fatalf("end-to-end %+v", s.EndToEndMS)
	}
	a := s.Topics[0]
	if a.Topic != "topic-a" || a.QueueWaitMS.Count != 100 || a.QueueWaitMS.P95 < 9.4 || a.QueueWaitMS.P95 > 9.6 || a.ProcessMS.P50 < 1.99 || a.ProcessMS.P50 > 2.01 {
		t.Fatalf("topic-a %+v", a)
	}
	if s.Topics[1].QueueWaitMS.Count != 0 {
		t.Fatalf("topic-b %+v", s.Topics[1])
	}
	if len(s.Work) != 1 || s.Work[0].Span != "search" || s.Work[0].MS.Count != 1 || s.Work[0].MS.P50 < 0.99 || s.Work[0].MS.P50 > 1.01 {
		t.Fatalf("work %+v", s.Work)
	}
	if s.SpansRecorded != 302 || s.ThroughputPerS != 50 {
		t.Fatalf("spans %d throughput %v", s.SpansRecorded, s.ThroughputPerS)
	}
	var text, js bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wait topic-a", "timed out 1", "end-to-end"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	for _, key := range []string{`"end_to_end_ms"`, `"queue_wait_ms"`, `"throughput_per_second"`, `"spans_dropped"`} {
		if !strings.Contains(js.String(), key) {
			t.Errorf("json lacks %s", key)
		}
	}
}
