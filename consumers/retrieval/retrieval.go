// SPDX-License-Identifier: Apache-2.0

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
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/redact"
	"github.com/kretrieve/kretrieve/search"
)

// ScopeName is the instrumentation scope of the retrieval spans.
const ScopeName = "github.com/kretrieve/kretrieve/consumers/retrieval"

// DefaultSearchTimeout is Config.SearchTimeout's default: a search of the Go
// corpus takes about a millisecond, and no query (search.MaxQueryTerms)
// should take a hundredth of this.
const DefaultSearchTimeout = time.Second

// MinSearchTimeout is the least Config.SearchTimeout the command line
// takes: below it, a burst of slow queries on a loaded machine (tens of
// milliseconds each, queued behind one another) overruns the deadline
// twice and dead-letters innocent requests as permanent failures.
const MinSearchTimeout = 100 * time.Millisecond

// ErrSearchTimeout is returned (wrapped, as a permanent error, so the request
// is dead-lettered) when a search overruns Config.SearchTimeout twice in a
// row.
var ErrSearchTimeout = errors.New("search timeout")

// Searcher finds the best documents for a query. A Searcher that is also a
// consumers.Versioner has each candidate name the version of its document;
// one that is a consumers.FreshnessReporter stamps the candidates'
// index_freshness with its entry.
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
	// RecordDocuments adds the documents found to the search span, as
	// the GenAI conventions' opt-in gen_ai.retrieval.documents (each
	// document's id and score, best first). Like the query text it tells
	// what a user searched for: leave it off in production. Default:
	// false.
	RecordDocuments bool
	// SearchTimeout bounds one search. A search still running at the
	// deadline is cancelled and run once more with a fresh deadline (the
	// worker, frozen or starved while it ran, may have made it late, not
	// the query); a second overrun dead-letters the request (a permanent
	// error wrapping ErrSearchTimeout, not retried by the worker, since the
	// same query would cost as much again). bleve has only the hits of the
	// documents it reached, not the best ones, so there is no partial
	// answer. Default: DefaultSearchTimeout; negative: no deadline.
	SearchTimeout time.Duration
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
	if cfg.SearchTimeout == 0 {
		cfg.SearchTimeout = DefaultSearchTimeout
	}
	tracer := consumers.NewHandlerConfig(opts...).TracerProvider.Tracer(ScopeName)
	return func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		req, err := messages.DecodeRequestKeyed(msg.Record.Value, msg.Record.Key)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		// Read before searching: the index searched is at least this fresh.
		fresh := consumers.WithFreshness(nil, s, cfg.Stage, start)
		ctx, span := tracer.Start(ctx, otelnames.SpanSearch, trace.WithAttributes(
			otelnames.GenAIOperationName.String(otelnames.GenAIOperationRetrieval),
			otelnames.GenAIDataSourceID.String(s.Name()),
			otelnames.GenAIRetrievalTopK.Int(req.TopK),
			redact.Request(req.RequestID),
			otelnames.IndexName.String(s.Name()),
			otelnames.IndexDocuments.Int(s.Len()),
			otelnames.SearchTopK.Int(req.TopK),
		), trace.WithAttributes(redact.Query(req.Query)...))
		if cfg.RecordQueryText {
			span.SetAttributes(otelnames.QueryText.String(req.Query))
		}
		hits, err := searchWithin(ctx, s, req, cfg.SearchTimeout, span)
		if err != nil {
			return nil, searchFailed(span, err, req.Query)
		}
		span.SetAttributes(otelnames.SearchHits.Int(len(hits)))
		if cfg.RecordDocuments {
			span.SetAttributes(documents(hits))
		}
		span.End()

		out := messages.Candidates{
			RequestID:  req.RequestID,
			Query:      req.Query,
			TopK:       req.TopK,
			Candidates: candidates(s, hits),
			Timings: messages.Timings{}.With(messages.StageTiming{
				Stage:   cfg.Stage,
				QueueMS: millis(msg.QueueWait.Signed()),
				WorkMS:  millis(time.Since(start)),
			}),
			IndexFreshness: fresh,
		}
		value, err := messages.EncodeCandidates(out)
		if err != nil {
			return nil, consumers.Permanent(fmt.Errorf("encode candidates: %w", err))
		}
		return []*kgo.Record{{Topic: cfg.CandidatesTopic, Key: []byte(req.RequestID), Value: value}}, nil
	}
}

// searchFailed ends span with err, redacted of query, and returns the
// handler's error: permanent (dead-lettered, not retried) for a query that
// would fail again. error.type says which failure it was
// (otelnames.ErrorType*).
func searchFailed(span trace.Span, err error, query string) error {
	// A searcher's error may quote the query: it must not reach spans,
	// logs or the dead-letter reason.
	err = consumers.RedactError(err, query)
	errType := otelnames.ErrorTypeOther
	switch {
	case errors.Is(err, ErrSearchTimeout):
		errType = otelnames.ErrorTypeSearchTimeout
	case errors.Is(err, search.ErrInvalidQuery):
		errType = otelnames.ErrorTypeInvalidQuery
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	span.SetAttributes(semconv.ErrorTypeKey.String(errType))
	span.End()
	err = fmt.Errorf("search: %w", err)
	if errType != otelnames.ErrorTypeOther {
		// The same query fails again (a timeout takes as long again): no
		// point retrying it.
		return consumers.Permanent(err)
	}
	return err
}

// documents is the gen_ai.retrieval.documents attribute of hits, in the
// structured form the GenAI conventions ask for on spans: an array of maps
// with the document's "id" and its "score" (the conventions' retrieval
// documents JSON schema).
func documents(hits []search.Hit) attribute.KeyValue {
	docs := make([]attribute.Value, len(hits))
	for i, h := range hits {
		docs[i] = attribute.MapValue(attribute.String("id", h.ID), attribute.Float64("score", h.Score))
	}
	return otelnames.GenAIRetrievalDocuments.Slice(docs...)
}

// candidates returns hits as candidates. When s is a consumers.Versioner
// each names the version of its document, read just after the search: the
// hits do not carry it, so a document replaced in the microseconds between
// is named at its new version (enrichment still names the version of what
// it returns), and a hit deleted in between is left out.
func candidates(s Searcher, hits []search.Hit) []messages.Candidate {
	cands := make([]messages.Candidate, 0, len(hits))
	versions, versioned := s.(consumers.Versioner)
	for _, h := range hits {
		c := messages.Candidate{DocID: h.ID, Score: h.Score}
		if versioned {
			v, ok := versions.Version(h.ID)
			if !ok {
				continue
			}
			c.Version = v
		}
		cands = append(cands, c)
	}
	return cands
}

// searchWithin runs one search of req on s within timeout (none if negative),
// and records on span the plan the index reports (search.Trace): the term
// clauses searched and the terms dropped over search.MaxQueryTerms. A search
// that overruns its own deadline (not the worker's context) is run once
// more, at once and with a fresh deadline, with a retry event on span: the
// deadline is wall-clock time, which a worker frozen or starved of CPU
// while the search ran (SIGSTOP, a paused container, a VM's steal) spends
// without searching. A second overrun fails with ErrSearchTimeout.
func searchWithin(ctx context.Context, s Searcher, req messages.Request, timeout time.Duration, span trace.Span) ([]search.Hit, error) {
	sctx := search.WithTrace(ctx, &search.Trace{QueryPlanned: func(p search.QueryPlan) {
		span.SetAttributes(otelnames.SearchClauses.Int(p.Clauses))
		if p.DroppedTerms > 0 {
			span.SetAttributes(otelnames.SearchTermsDropped.Int(p.DroppedTerms))
		}
	}})
	if timeout <= 0 {
		return s.Search(sctx, req.Query, req.TopK)
	}
	for attempt := 1; ; attempt++ {
		hits, err := searchBefore(ctx, sctx, s, req, timeout)
		if !errors.Is(err, ErrSearchTimeout) || attempt == searchAttempts {
			return hits, err
		}
		span.AddEvent(otelnames.EventRetry, trace.WithAttributes(
			otelnames.RetryAttempt.Int(attempt),
			otelnames.RetryError.String(err.Error()),
			otelnames.RetryBackoffMS.Float64(0),
		))
	}
}

// searchAttempts is how many times searchWithin starts a search that
// overruns its deadline: a slow query costs at most this many deadlines.
const searchAttempts = 2

// searchBefore runs one search of req on s in sctx (derived from the
// worker's ctx) with a deadline timeout from now; it fails with
// ErrSearchTimeout when the deadline, not ctx, ended it.
func searchBefore(ctx, sctx context.Context, s Searcher, req messages.Request, timeout time.Duration) ([]search.Hit, error) {
	sctx, cancel := context.WithTimeout(sctx, timeout)
	defer cancel()
	hits, err := s.Search(sctx, req.Query, req.TopK)
	if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w: no answer within %s", ErrSearchTimeout, timeout)
	}
	return hits, err
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
