package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
)

// runWorker runs a retrieval or enrichment worker until ctx is done.
func runWorker(ctx context.Context, role string, args []string, getenv func(string) string, stderr io.Writer) (err error) {
	cfg, err := loadWorkerConfig(role, args, getenv, stderr)
	if err != nil {
		return err
	}
	comp, err := startComponent(ctx, "kretrieve-"+role, cfg.logFormat, cfg.logLevel, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, comp.shutdown(cfg.shutdownTimeout)) }()

	pc := cfg.pipelineConfig(comp.logger, comp.telemetry)
	pc.Worker = cfg.worker
	if err := pipeline.EnsureTopics(ctx, pc); err != nil {
		return err
	}
	idx, err := search.DemoIndex()
	if err != nil {
		return err
	}
	var w *consumers.Worker
	switch role {
	case "retrieval":
		w, err = pipeline.NewRetrievalWorker(pc, idx)
	case "enrichment":
		w, err = pipeline.NewEnrichmentWorker(pc, idx)
	default:
		err = fmt.Errorf("unknown worker role %q", role)
	}
	if err != nil {
		return err
	}
	return w.Run(ctx)
}
