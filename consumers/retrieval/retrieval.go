// Package retrieval is the retrieval worker's handler: it decodes a request,
// searches the index and publishes the candidates for enrichment. Its
// settings are a Config, its tracer provider a consumers.HandlerOption
// (consumers.WithTracerProvider).
package retrieval

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/redact"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/telemetry"
)

// ScopeName is the instrumentation scope of the retrieval spans.
const ScopeName = "github.com/kretrieve/kretrieve/consumers/retrieval"

// Searcher finds the best documents for a query.
type Searcher interface {
	Search(ctx context.Context, query string, k int) ([]search.Hit, error)
	// Name and Len describe the index on spans.
	Name() string
	Len() int
}

// Config configures the handler.
type Config struct {
	// CandidatesTopic is where candidates are published. Default:
	// messages.DefaultCandidatesTopic.
	CandidatesTopic string
	// Stage names the handler's entry in the timings it publishes (the
	// pipeline stage it runs as). Default: messages.StageRetrieval.
	Stage string
	// RecordQueryText adds the query text to the search span (attribute
	// kretrieve.query.text), for debugging; nothing else changes: errors
	// quoting the query stay withheld. Queries are user data: leave it off
	// in production. Default: false.
	RecordQueryText bool
}

// Handler returns the retrieval handler over s, configured by cfg, with the
// collaborators of opts.
func Handler(s Searcher, cfg Config, opts ...consumers.HandlerOption) consumers.Handler {
	if cfg.Stage == "" {
		cfg.Stage = messages.StageRetrieval
	}
	if cfg.CandidatesTopic == "" {
		cfg.CandidatesTopic = messages.DefaultCandidatesTopic
	}
	tracer := consumers.NewHandlerConfig(opts...).TracerProvider.Tracer(ScopeName)
	return func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		req, err := messages.DecodeRequestKeyed(msg.Record.Value, msg.Record.Key)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		ctx, span := tracer.Start(ctx, telemetry.SpanSearch, trace.WithAttributes(
			redact.Request(req.RequestID),
			telemetry.IndexName.String(s.Name()),
			telemetry.IndexDocuments.Int(s.Len()),
			telemetry.SearchTopK.Int(req.TopK),
		), trace.WithAttributes(redact.Query(req.Query)...))
		if cfg.RecordQueryText {
			span.SetAttributes(telemetry.QueryText.String(req.Query))
		}
		hits, err := s.Search(ctx, req.Query, req.TopK)
		if err != nil {
			// A searcher's error may quote the query: it must not reach
			// spans, logs or the dead-letter reason.
			err = consumers.RedactError(err, req.Query)
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			span.End()
			err = fmt.Errorf("search: %w", err)
			if errors.Is(err, search.ErrInvalidQuery) {
				// The same query fails again: no point retrying it.
				return nil, consumers.Permanent(err)
			}
			return nil, err
		}
		span.SetAttributes(telemetry.SearchHits.Int(len(hits)))
		span.End()

		cands := make([]messages.Candidate, len(hits))
		for i, h := range hits {
			cands[i] = messages.Candidate{DocID: h.ID, Score: h.Score}
		}
		value, err := messages.EncodeCandidates(messages.Candidates{
			RequestID:  req.RequestID,
			Query:      req.Query,
			TopK:       req.TopK,
			Candidates: cands,
			Timings: messages.Timings{}.With(messages.StageTiming{
				Stage:   cfg.Stage,
				QueueMS: millis(msg.QueueWait.Wait),
				WorkMS:  millis(time.Since(start)),
			}),
		})
		if err != nil {
			return nil, consumers.Permanent(fmt.Errorf("encode candidates: %w", err))
		}
		return []*kgo.Record{{Topic: cfg.CandidatesTopic, Key: []byte(req.RequestID), Value: value}}, nil
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
