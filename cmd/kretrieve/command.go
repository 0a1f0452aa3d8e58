package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/tracing"
)

// command is the preamble and the ending every command that talks to Kafka
// shares, declared once: its flags parsed (by the command), run starts the
// logger and the telemetry as service "kretrieve-<role>", connects, runs
// the command's body, and flushes the telemetry however the body ended.
// The signal context is main's.
type command struct {
	// role names the service, "kretrieve-<role>".
	role string
	// configure adjusts the pipeline's settings before the pipeline is
	// built (the worker settings of the worker commands), or is nil.
	configure func(*pipeline.Config)
	// connect runs before the body: checkKafka, ensureTopics, or nil for
	// nothing.
	connect func(context.Context, *pipeline.Pipeline) error
	// flushTimeout bounds the telemetry flush at the end. Default: 10 s.
	flushTimeout time.Duration
	// telemetry are added to the tracing.Setup options.
	telemetry []tracing.Option
}

// run runs body with the command's component and pipeline, built from cfg,
// and joins the telemetry flush's error into body's (or
// connect's). A body may flush earlier with comp.shutdown, to read the
// telemetry's final counts: the flush at the end then does nothing.
func (c command) run(ctx context.Context, cfg commonConfig, stderr io.Writer, body func(comp *component, p *pipeline.Pipeline) error) (err error) {
	comp, pc, err := cfg.start(ctx, c.role, stderr, c.telemetry...)
	if err != nil {
		return err
	}
	if c.configure != nil {
		c.configure(&pc)
	}
	timeout := c.flushTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	defer func() { err = errors.Join(err, comp.shutdown(timeout)) }()
	p, err := comp.pipeline(pc)
	if err != nil {
		return err
	}
	if c.connect != nil {
		if err := c.connect(ctx, p); err != nil {
			return err
		}
	}
	return body(comp, p)
}
