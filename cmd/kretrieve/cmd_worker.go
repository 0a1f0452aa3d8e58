package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
)

// openIndex opens the index directory, or builds the Go standard library
// index in memory when dir is empty, logging which and how long it took.
func openIndex(ctx context.Context, dir string, logger *slog.Logger) (*search.Index, error) {
	start := time.Now()
	idx, err := pipeline.OpenIndex(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	logger.InfoContext(ctx, "index ready", "index", idx.Name(), "documents", idx.Len(), "dir", dir, "took", time.Since(start).Round(time.Millisecond))
	return idx, nil
}

// runWorker runs a worker of the stage named role until ctx is done.
func runWorker(ctx context.Context, role string, cfg workerConfig, stderr io.Writer) (err error) {
	return command{role: role, configure: func(pc *pipeline.Config) {
		pc.Worker = cfg.worker
		pc.RecordQueryText = cfg.recordQueryText
		pc.SearchTimeout = cfg.searchTimeout
	}, connect: ensureTopicsWhenReachable, flushTimeout: cfg.shutdownTimeout}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		idx, err := openIndex(ctx, cfg.index, comp.logger)
		if err != nil {
			return err
		}
		defer idx.Close()
		w, err := p.NewWorker(role, idx)
		if err != nil {
			return err
		}
		// Stopped after the worker has drained and committed: its last window
		// holds the last records.
		defer publishPathways(ctx, cfg.pathways, p, comp)()
		if cfg.lagInterval > 0 {
			// Every worker of a group exports the group's lag; the series carry
			// the worker's resource (service.instance.id), so take their max.
			m, err := lag.NewMonitor(kafkaOptions(p, nil), lag.MonitorConfig{Groups: []string{cfg.worker.Group}, Interval: cfg.lagInterval},
				lag.WithMeterProvider(comp.telemetry.MeterProvider), lag.WithLogger(comp.logger))
			if err != nil {
				return err
			}
			defer m.Close()
			go func() { _ = m.Run(ctx) }()
		}
		return w.Run(ctx)
	})
}
