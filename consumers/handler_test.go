// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/messages"
)

func TestRecoverTurnsPanicIntoPermanentError(t *testing.T) {
	tests := []struct {
		name  string
		panic func()
		want  string
	}{
		// A panic value may quote the record: only its type is kept.
		{"string", func() { panic("poison query canary") }, "handler panic (string value)"},
		{"error", func() { panic(fmt.Errorf("decode %q", "canary")) }, "handler panic (*errors.errorString value)"},
		// A runtime error's text is the program's, not the record's.
		{"runtime error", func() {
			var s []int
			_ = s[len("abc")]
		}, "handler panic: runtime error: index out of range [3] with length 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Chain(func(context.Context, *Message) ([]*kgo.Record, error) { tt.panic(); return nil, nil }, Recover())
			outs, err := h(t.Context(), &Message{Record: &kgo.Record{}, Attempt: 1})
			if outs != nil || err == nil || !IsPermanent(err) || err.Error() != tt.want {
				t.Fatalf("outs %v err %v, want a permanent %q", outs, err, tt.want)
			}
			var pe *panicError
			if !errors.As(err, &pe) || !strings.Contains(string(pe.stack), "TestRecoverTurnsPanicIntoPermanentError") {
				t.Errorf("no stack of the panicking goroutine kept: %v", err)
			}
		})
	}
}

func TestIsPermanent(t *testing.T) {
	_, decodeErr := messages.DecodeRequest([]byte("nope"))
	tests := []struct {
		err  error
		want bool
	}{
		{errors.New("broker down"), false},
		{Permanent(errors.New("bad")), true},
		{fmt.Errorf("wrapped: %w", Permanent(errors.New("bad"))), true},
		{decodeErr, true},
		{fmt.Errorf("handle: %w", decodeErr), true},
	}
	for _, tt := range tests {
		if got := IsPermanent(tt.err); got != tt.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) is not nil")
	}
}

func TestRetry(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, span := tp.Tracer("t").Start(t.Context(), "process")

	calls := 0
	flaky := func(context.Context, *Message) ([]*kgo.Record, error) {
		calls++
		if calls < 3 {
			return nil, errors.New("transient")
		}
		return []*kgo.Record{{Topic: "out"}}, nil
	}
	msg := &Message{Record: &kgo.Record{}, Attempt: 1}
	outs, err := Chain(flaky, Retry(RetryConfig{Attempts: 5, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}))(ctx, msg)
	span.End()
	if err != nil || len(outs) != 1 || calls != 3 || msg.Attempt != 3 {
		t.Fatalf("err %v outs %d calls %d attempt %d", err, len(outs), calls, msg.Attempt)
	}
	if ev := rec.Ended()[0].Events(); len(ev) != 2 || ev[0].Name != "retry" {
		t.Fatalf("events %v, want two retry events", ev)
	}

	t.Run("gives up after attempts", func(t *testing.T) {
		calls := 0
		msg := &Message{Record: &kgo.Record{}, Attempt: 1}
		_, err := Chain(func(context.Context, *Message) ([]*kgo.Record, error) {
			calls++
			return nil, errors.New("down")
		}, Retry(RetryConfig{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))(t.Context(), msg)
		if err == nil || calls != 3 || msg.Attempt != 3 {
			t.Fatalf("err %v calls %d attempt %d", err, calls, msg.Attempt)
		}
	})
	t.Run("permanent errors are not retried", func(t *testing.T) {
		calls := 0
		_, err := Chain(func(context.Context, *Message) ([]*kgo.Record, error) {
			calls++
			return nil, Permanent(errors.New("bad"))
		}, Retry(RetryConfig{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))(t.Context(), &Message{Record: &kgo.Record{}, Attempt: 1})
		if err == nil || calls != 1 {
			t.Fatalf("err %v calls %d", err, calls)
		}
	})
	t.Run("stops when the context is done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		calls := 0
		_, err := Chain(func(context.Context, *Message) ([]*kgo.Record, error) {
			calls++
			cancel()
			return nil, errors.New("down")
		}, Retry(RetryConfig{Attempts: 10, MinBackoff: time.Hour, MaxBackoff: time.Hour}))(ctx, &Message{Record: &kgo.Record{}, Attempt: 1})
		if err == nil || calls != 1 {
			t.Fatalf("err %v calls %d", err, calls)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err == nil || !strings.Contains(err.Error(), "group") || !strings.Contains(err.Error(), "topic") {
		t.Fatalf("err %v", err)
	}
	if err := (Config{Group: "g", Topic: "t", Concurrency: -1}).Validate(); err == nil {
		t.Fatal("negative concurrency accepted")
	}
	if err := (Config{Group: "g", Topic: "t"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRetryConfigDefaults(t *testing.T) {
	got := RetryConfig{}.withDefaults()
	want := RetryConfig{Attempts: 3, MinBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second}
	if got != want {
		t.Fatalf("RetryConfig{}.withDefaults() = %+v, want %+v", got, want)
	}
	if c := (Config{}).withDefaults(); c != DefaultConfig() {
		t.Fatalf("Config{}.withDefaults() = %+v, want DefaultConfig() %+v", c, DefaultConfig())
	}
}
