// SPDX-License-Identifier: Apache-2.0

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

	err := command{role: "test", connect: func(context.Context, *pipeline.Pipeline) error { return boom }}.run(t.Context(), cfg, io.Discard,
		func(*component, *pipeline.Pipeline) error {
			t.Error("the body ran although connecting failed")
			return nil
		})
	if !errors.Is(err, boom) {
		t.Fatalf("connect error: %v", err)
	}

	var seen *component
	configured := false
	err = command{role: "test", configure: func(pc *pipeline.Config) { pc.RecordQueryText, configured = true, true }}.run(t.Context(), cfg, io.Discard, func(comp *component, p *pipeline.Pipeline) error {
		seen = comp
		if pc := p.Config(); pc.ServiceName != "kretrieve-test" || p.Logger() != comp.logger || !configured || !pc.RecordQueryText {
			t.Errorf("service %q, logger %p (component's %p), configured %v", pc.ServiceName, p.Logger(), comp.logger, pc.RecordQueryText)
		}
		if comp.shut {
			t.Error("telemetry flushed before the body ended")
		}
		return boom
	})
	if !errors.Is(err, boom) || seen == nil || !seen.shut {
		t.Fatalf("body error %v, flushed at the end: %v", err, seen != nil && seen.shut)
	}

	err = command{role: "test"}.run(t.Context(), cfg, io.Discard, func(comp *component, _ *pipeline.Pipeline) error {
		seen = comp
		return comp.shutdown(time.Second)
	})
	if err != nil || !seen.shut || seen.shutdown(time.Second) != nil {
		t.Fatalf("early flush: %v", err)
	}
}
