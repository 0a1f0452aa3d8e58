package main

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/pipeline"
)

// TestCommandRun: run names the service after the role, skips the body
// when connecting fails, flushes the telemetry however the body ended, and
// a body's early flush leaves nothing to do at the end.
func TestCommandRun(t *testing.T) {
	cfg := commonConfig{brokers: "127.0.0.1:1", logFormat: "text", logLevel: "error"}
	boom := errors.New("boom")

	err := command{role: "test", connect: func(context.Context, pipeline.Config) error { return boom }}.run(t.Context(), cfg, io.Discard,
		func(*component, pipeline.Config) error {
			t.Error("the body ran although connecting failed")
			return nil
		})
	if !errors.Is(err, boom) {
		t.Fatalf("connect error: %v", err)
	}

	var seen *component
	err = command{role: "test"}.run(t.Context(), cfg, io.Discard, func(comp *component, pc pipeline.Config) error {
		seen = comp
		if pc.ServiceName != "kretrieve-test" || pc.Logger != comp.logger {
			t.Errorf("service %q, logger %p (component's %p)", pc.ServiceName, pc.Logger, comp.logger)
		}
		if comp.shut {
			t.Error("telemetry flushed before the body ended")
		}
		return boom
	})
	if !errors.Is(err, boom) || seen == nil || !seen.shut {
		t.Fatalf("body error %v, flushed at the end: %v", err, seen != nil && seen.shut)
	}

	err = command{role: "test"}.run(t.Context(), cfg, io.Discard, func(comp *component, _ pipeline.Config) error {
		seen = comp
		return comp.shutdown(time.Second)
	})
	if err != nil || !seen.shut || seen.shutdown(time.Second) != nil {
		t.Fatalf("early flush: %v", err)
	}
}
