// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
)

// declareIndex declares the flag naming the index directory.
func declareIndex(s *settings, p *string) {
	s.str(p, "index", "", "index DIR: this worker's own, following the documents topic and resumed from at restart (created when missing); "+
		"a directory built by `kretrieve index` from files is served as it is, static (default: follow the documents topic into a temporary directory)")
}

// workerIndex is the index a process's workers search: the documents
// topic followed into a directory or memory (package docfeed), or a static
// directory built from files by `kretrieve index`.
type workerIndex struct {
	idx      pipeline.Index
	follower *docfeed.Follower // nil for a static index
	static   *search.Index
}

// openWorkerIndex opens the index of dir for the stage (or process) name.
func openWorkerIndex(ctx context.Context, p *pipeline.Pipeline, name, dir string, logger *slog.Logger) (*workerIndex, error) {
	if dir != "" {
		if ix, err := search.Open(dir); err == nil {
			if len(ix.Position().Offsets) == 0 && ix.Len() > 0 {
				logger.InfoContext(ctx, "static index: not following the documents topic", "index", ix.Name(), "documents", ix.Len(), "dir", dir)
				return &workerIndex{idx: ix, static: ix}, nil
			}
			if err := ix.Close(); err != nil {
				return nil, fmt.Errorf("index %s: %w", dir, err)
			}
		}
	}
	f, err := p.NewFollower(ctx, name, dir)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	return &workerIndex{idx: f.Index(), follower: f}, nil
}

// follow runs the follower until ctx is done and waits until it has
// caught up with the topic: workers must not answer from a partial
// index. The returned channel receives the follower's end (nil for a
// static index: closed at once).
func (wi *workerIndex) follow(ctx context.Context, logger *slog.Logger) (<-chan error, error) {
	done := make(chan error, 1)
	if wi.follower == nil {
		close(done)
		return done, nil
	}
	start := time.Now()
	go func() { done <- wi.follower.Run(ctx) }()
	ready := make(chan error, 1)
	go func() { ready <- wi.follower.WaitReady(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("documents: %w", err)
	case err := <-ready:
		if err != nil {
			return nil, err
		}
	}
	s := wi.follower.Status()
	logger.InfoContext(ctx, "index ready", "index", s.Name, "documents", s.Documents, "topic", s.Topic,
		"applied", s.Applied, "took", time.Since(start).Round(time.Millisecond))
	return done, nil
}

// feeds says where the index stands in the documents topic, for the
// process's pathway windows (pathwaytopic.WithFeeds); none for a static
// index.
func (wi *workerIndex) feeds() []pathwaytopic.Feed {
	if wi.follower == nil {
		return nil
	}
	s := wi.follower.Status()
	return []pathwaytopic.Feed{{Name: s.Name, Topic: s.Topic, Offsets: s.Offsets, Newest: s.NewestApplied,
		Documents: int64(s.Documents), Ready: s.Ready}}
}

// while follows the documents topic (see follow), runs fn once the index
// has caught up, and stops following when fn returns; a follower that
// stops with an error (an index that cannot be written) stops fn too.
func (wi *workerIndex) while(ctx context.Context, logger *slog.Logger, fn func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	followed, err := wi.follow(ctx, logger)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() {
		err := <-followed
		if err != nil {
			logger.ErrorContext(ctx, "documents follower stopped; stopping", "err", err)
			cancel()
		}
		ended <- err
	}()
	err = fn(ctx)
	cancel()
	return errors.Join(err, <-ended)
}

// handler serves /healthz, /readyz and (when following) /v1/index.
func (wi *workerIndex) handler() http.Handler {
	if wi.follower != nil {
		return docfeed.Handler(wi.follower)
	}
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }
	mux.HandleFunc("GET /healthz", ok)
	mux.HandleFunc("GET /readyz", ok)
	return mux
}

// serveHealth serves wi's handler on addr until ctx is done; "" serves
// nothing.
func (wi *workerIndex) serveHealth(ctx context.Context, addr string, logger *slog.Logger) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("health-listen: %w", err)
	}
	srv := &http.Server{Handler: wi.handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.WarnContext(ctx, "health server stopped", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	logger.InfoContext(ctx, "serving health and index status", "addr", ln.Addr().String())
	return nil
}

// Close closes the index (and the follower's client).
func (wi *workerIndex) Close() error {
	if wi.follower != nil {
		return wi.follower.Close()
	}
	return wi.static.Close()
}

// seedDocuments publishes the Go standard library documentation to p's
// documents topic when the topic holds no record, so that `kretrieve run`
// takes the production path by default: documents from the topic. It
// does nothing for a static index (wi follows no topic).
func (wi *workerIndex) seedDocuments(ctx context.Context, p *pipeline.Pipeline, comp *component, stderr io.Writer) error {
	if wi.follower == nil {
		return nil
	}
	topic := p.Topology().Documents
	_, until, err := topicExtents(ctx, kafkaOptions(p, nil), topic)
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("documents topic %s: %w", topic, err)
	}
	for _, end := range until {
		if end > 0 {
			return nil
		}
	}
	start := time.Now()
	docs, err := corpus.GoStdlib(ctx, "")
	if err != nil {
		return fmt.Errorf("go corpus: %w", err)
	}
	n, err := publishDocuments(ctx, p, comp, docs, nil, 0, stderr)
	if n != nil {
		comp.logger.InfoContext(ctx, "documents topic was empty: published the Go documentation", "topic", topic,
			"published", n.published, "took", time.Since(start).Round(time.Millisecond))
	}
	return err
}
