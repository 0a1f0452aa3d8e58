// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/otelnames"
)

// TestRetryBackoffJitter: Retry's waits keep their bounds, each within
// [step/2, step] of MinBackoff doubling to MaxBackoff (equal jitter), and
// are spread: records failing together do not all retry after the same
// wait. The waits are read from the retry events' backoff_ms.
func TestRetryBackoffJitter(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	const minB, maxB = 200 * time.Microsecond, 800 * time.Microsecond
	retry := Retry(RetryConfig{Attempts: 5, MinBackoff: minB, MaxBackoff: maxB})
	down := func(context.Context, *Message) ([]*kgo.Record, error) { return nil, errors.New("down") }
	for range 40 {
		ctx, span := tp.Tracer("t").Start(t.Context(), "process")
		if _, err := Chain(down, retry)(ctx, &Message{Record: &kgo.Record{}, Attempt: 1}); err == nil {
			t.Fatal("no error after the last attempt")
		}
		span.End()
	}
	steps := []time.Duration{minB, 2 * minB, maxB, maxB} // the 4 retries of 5 attempts
	firsts := map[float64]bool{}
	for _, s := range rec.Ended() {
		ev := s.Events()
		if len(ev) != len(steps) {
			t.Fatalf("%d retry events, want %d", len(ev), len(steps))
		}
		for i, e := range ev {
			var ms float64
			for _, a := range e.Attributes {
				if a.Key == otelnames.RetryBackoffMS {
					ms = a.Value.AsFloat64()
				}
			}
			wait := time.Duration(ms * float64(time.Millisecond))
			if wait < steps[i]/2-time.Nanosecond || wait > steps[i]+time.Nanosecond {
				t.Errorf("retry %d waited %v, want within [%v, %v]", i+1, wait, steps[i]/2, steps[i])
			}
			if i == 0 {
				firsts[ms] = true
			}
		}
	}
	if len(firsts) < 20 {
		t.Errorf("40 records' first retries waited only %d distinct times: no jitter", len(firsts))
	}
}
