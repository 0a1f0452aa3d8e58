// SPDX-License-Identifier: Apache-2.0

package enrichment_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/enrichment"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/search"
)

// TestDegradedUnderDeadlinePressure runs the handler over a real index:
// with its deadline nearer than DegradeBelow the result holds the same
// documents without snippets and is marked degraded (and the load span
// says so); with a far deadline, or none, the result is whole.
func TestDegradedUnderDeadlinePressure(t *testing.T) {
	ix, err := search.NewMemory(t.Context(), "t", []search.Document{
		{ID: "kafka", Title: "Kafka", Body: "Kafka consumer groups commit offsets; lag grows when consumers stall."},
		{ID: "lag", Title: "Lag", Body: "Consumer lag is the distance between the log end and the committed offset."},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	value, err := messages.EncodeCandidates(messages.Candidates{RequestID: "r1", Query: "consumer lag", TopK: 2,
		Candidates: []messages.Candidate{{DocID: "kafka", Score: 2}, {DocID: "lag", Score: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		deadline time.Duration // from now; 0: none
		degraded bool
	}{
		{"no deadline", 0, false},
		{"far deadline", time.Minute, false},
		{"near deadline", 20 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			h := enrichment.Handler(ix, enrichment.Config{DegradeBelow: 100 * time.Millisecond}, consumers.WithTracerProvider(tp))
			msg := &consumers.Message{Record: &kgo.Record{Key: []byte("r1"), Value: value}, Attempt: 1}
			if tc.deadline != 0 {
				msg.Deadline = time.Now().Add(tc.deadline)
			}
			outs, err := h(t.Context(), msg)
			if err != nil || len(outs) != 1 {
				t.Fatalf("outs %v err %v", outs, err)
			}
			r, err := messages.DecodeResult(outs[0].Value)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Documents) != 2 {
				t.Fatalf("%d documents, want 2 (degraded or not)", len(r.Documents))
			}
			want := []messages.Degradation(nil)
			if tc.degraded {
				want = []messages.Degradation{{Stage: messages.StageEnrichment, Dropped: messages.DroppedSnippets, Reason: messages.ReasonDeadline}}
			}
			if len(r.Degraded) != len(want) || (len(want) == 1 && r.Degraded[0] != want[0]) {
				t.Errorf("degraded = %+v, want %+v", r.Degraded, want)
			}
			for _, d := range r.Documents {
				if (d.Snippet == "") != tc.degraded || d.Title == "" {
					t.Errorf("document %s: title %q snippet %q, degraded %v", d.ID, d.Title, d.Snippet, tc.degraded)
				}
			}
			marked := false
			for _, s := range rec.Ended() {
				for _, a := range s.Attributes() {
					if a.Key == otelnames.Degraded && a.Value.AsString() == messages.DroppedSnippets {
						marked = true
					}
				}
			}
			if marked != tc.degraded {
				t.Errorf("load span marked degraded: %v, want %v", marked, tc.degraded)
			}
		})
	}
}
