// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/tracing"
)

// defaultFlushTimeout bounds a command's telemetry flush at its end.
const defaultFlushTimeout = 10 * time.Second

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
	// prepare, when not nil, starts what the pipeline needs before it is
	// built, with the command's logger and telemetry (run's embedded
	// broker), and may adjust its settings as configure does. Its release
	// runs when the command ends, before the telemetry flush.
	prepare func(comp *component, pc *pipeline.Config) (release func(), err error)
	// connect runs before the body: checkKafka, ensureTopics, or nil for
	// nothing.
	connect func(context.Context, *pipeline.Pipeline) error
	// flushTimeout bounds the telemetry flush at the end. Default:
	// defaultFlushTimeout.
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
	timeout := c.flushTimeout
	if timeout <= 0 {
		timeout = defaultFlushTimeout
	}
	defer func() { err = errors.Join(err, comp.shutdown(timeout)) }()
	if c.configure != nil {
		c.configure(&pc)
	}
	if c.prepare != nil {
		release, err := c.prepare(comp, &pc)
		if err != nil {
			return err
		}
		defer release()
	}
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

// start starts the logger and telemetry of a command talking to Kafka, as
// service "kretrieve-<role>", and returns them with the pipeline
// configuration. Flush the telemetry with component.shutdown.
func (c commonConfig) start(ctx context.Context, role string, stderr io.Writer, opts ...tracing.Option) (*component, pipeline.Config, error) {
	comp, err := startComponent(ctx, "kretrieve-"+role, c.logFormat, c.logLevel, stderr, append(opts, c.telemetryOptions()...)...)
	if err != nil {
		return nil, pipeline.Config{}, err
	}
	return comp, c.pipelineConfig(comp), nil
}

// pipeline builds the pipeline of pc with the component's logger, telemetry
// and messaging metrics.
func (comp *component) pipeline(pc pipeline.Config) (*pipeline.Pipeline, error) {
	t := comp.telemetry
	return pipeline.New(pc, pipeline.WithLogger(comp.logger), pipeline.WithTracerProvider(t.TracerProvider),
		pipeline.WithMeterProvider(t.MeterProvider), pipeline.WithPropagator(t.Propagator), pipeline.WithMetrics(comp.metrics))
}

// component is the logger and telemetry of one running command.
type component struct {
	logger    *slog.Logger
	telemetry *tracing.Providers
	// metrics aggregates the Kafka messaging metrics, exported with the
	// SDK's through telemetry's reader.
	metrics *kafkatrace.Metrics
	// shut is set by the first shutdown.
	shut bool
}

// startComponent builds the logger and the OpenTelemetry providers of a
// command whose default service name is service.
func startComponent(ctx context.Context, service, logFormat, logLevel string, stderr io.Writer, opts ...tracing.Option) (*component, error) {
	logger, err := tracing.NewLogger(stderr, logFormat, logLevel)
	if err != nil {
		return nil, err
	}
	slog.SetDefault(logger)
	// The Kafka metrics follow the exporter preferences and the exemplar
	// filter of the environment, as the SDK's instruments do (tracing.Setup warns about
	// unknown values).
	prefs, _ := tracing.ReadMetricsPreferences(os.Getenv)
	popts := []tracing.ProducerOption{tracing.WithTemporality(prefs.Temporality)}
	if prefs.ExplicitHistograms {
		popts = append(popts, tracing.WithExplicitPathwayBuckets())
	}
	metrics := kafkatrace.NewMetrics(kafkatrace.WithExemplarFilter(prefs.ExemplarFilter))
	p, err := tracing.Setup(ctx, append([]tracing.Option{
		tracing.WithServiceName(service), tracing.WithLogger(logger), tracing.WithMetricProducer(tracing.NewMetricsProducer(metrics, popts...)),
	}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return &component{logger: logger, telemetry: p, metrics: metrics}, nil
}

// shutdown flushes telemetry on a fresh context bounded by timeout. Only
// the first call does: later ones return nil.
func (c *component) shutdown(timeout time.Duration) error {
	if c.shut {
		return nil
	}
	c.shut = true
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := c.telemetry.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush telemetry: %w", err)
	}
	return nil
}
