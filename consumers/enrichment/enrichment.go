// SPDX-License-Identifier: Apache-2.0

// Package enrichment is the enrichment worker's handler: it loads the
// candidate documents with highlighted snippets, removes near-duplicates,
// re-ranks them and publishes the result. Each step has its own span. Its
// settings are a Config, its tracer provider a consumers.HandlerOption
// (consumers.WithTracerProvider).
package enrichment

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/redact"
	"github.com/kretrieve/kretrieve/rerank"
	"github.com/kretrieve/kretrieve/search"
)

// ScopeName is the instrumentation scope of the enrichment spans.
const ScopeName = "github.com/kretrieve/kretrieve/consumers/enrichment"

// DefaultSnippetRunes is the snippet length when Config.SnippetRunes is 0.
const DefaultSnippetRunes = 200

// DefaultDegradeBelow is Config.DegradeBelow when it is 0.
const DefaultDegradeBelow = 100 * time.Millisecond

// DocumentLoader is a Store that also loads a document without
// highlighting it (*search.Index and *docfeed.Live are): under deadline
// pressure the handler loads the documents this way, with empty
// snippets, and marks the result degraded.
type DocumentLoader interface {
	Document(id string) (search.Document, bool)
}

// Store loads documents with snippets highlighted for a query. Highlight
// must make each snippet from the document it returns with it (as
// *search.Index does). A Store that is also a consumers.Versioner has the
// result name the version of each document and mark those retrieval
// scored at another version (see load); one that is a
// consumers.FreshnessReporter adds its entry to the result's
// index_freshness.
type Store interface {
	Highlight(ctx context.Context, query string, ids []string, maxRunes int) (map[string]search.Highlighted, error)
}

// Config configures the handler.
type Config struct {
	// ResultsTopic is where results are published. Default:
	// messages.DefaultResultsTopic.
	ResultsTopic string
	// Stage names the handler's entry in the timings it publishes (the
	// pipeline stage it runs as). Default: messages.StageEnrichment.
	Stage string
	// SnippetRunes is the snippet length. Default: DefaultSnippetRunes.
	SnippetRunes int
	// DuplicateThreshold is the body similarity that makes a near-duplicate.
	// Default: rerank.DefaultDuplicateThreshold.
	DuplicateThreshold float64
	// DegradeBelow is the budget under which the handler returns less
	// rather than nothing: when a record's deadline (Message.Deadline) is
	// nearer than DegradeBelow as the handler starts, and the store is a
	// DocumentLoader, the documents are loaded without highlighted
	// snippets and the result is marked degraded (messages.Degradation:
	// "snippets", "deadline"). Negative: never. Default:
	// DefaultDegradeBelow.
	DegradeBelow time.Duration
}

// Handler returns the enrichment handler over store, configured by cfg,
// with the collaborators of opts.
func Handler(store Store, cfg Config, opts ...consumers.HandlerOption) consumers.Handler {
	if cfg.Stage == "" {
		cfg.Stage = messages.StageEnrichment
	}
	if cfg.ResultsTopic == "" {
		cfg.ResultsTopic = messages.DefaultResultsTopic
	}
	if cfg.SnippetRunes == 0 {
		cfg.SnippetRunes = DefaultSnippetRunes
	}
	if cfg.DegradeBelow == 0 {
		cfg.DegradeBelow = DefaultDegradeBelow
	}
	if cfg.DuplicateThreshold == 0 {
		cfg.DuplicateThreshold = rerank.DefaultDuplicateThreshold
	}
	tracer := consumers.NewHandlerConfig(opts...).TracerProvider.Tracer(ScopeName)
	return func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		c, err := messages.DecodeCandidates(msg.Record.Value)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		// Read before loading: the documents loaded are at least this fresh.
		fresh := consumers.WithFreshness(c.IndexFreshness, store, cfg.Stage, start)
		plain := degrade(msg.Deadline, start, cfg.DegradeBelow, store)
		docs, err := enrich(ctx, tracer, store, c, cfg, plain)
		if err != nil {
			return nil, err
		}
		timings := c.Timings.With(messages.StageTiming{
			Stage:   cfg.Stage,
			QueueMS: float64(msg.QueueWait.Signed()) / float64(time.Millisecond),
			WorkMS:  float64(time.Since(start)) / float64(time.Millisecond),
		})
		var degraded []messages.Degradation
		if plain {
			degraded = []messages.Degradation{{Stage: cfg.Stage, Dropped: messages.DroppedSnippets, Reason: messages.ReasonDeadline}}
		}
		value, err := messages.EncodeResult(messages.Result{RequestID: c.RequestID, Documents: docs, Timings: timings,
			IndexFreshness: fresh, Degraded: degraded})
		if err != nil {
			return nil, consumers.Permanent(fmt.Errorf("encode result: %w", err))
		}
		return []*kgo.Record{{Topic: cfg.ResultsTopic, Key: []byte(c.RequestID), Value: value}}, nil
	}
}

// degrade reports whether the handler, starting at start, loads the
// documents without snippets: the store can, and deadline (zero: none) is
// nearer than below.
func degrade(deadline, start time.Time, below time.Duration, store Store) bool {
	if deadline.IsZero() || below < 0 || deadline.Sub(start) >= below {
		return false
	}
	_, ok := store.(DocumentLoader)
	return ok
}

// enrich runs the steps, each in its own span: load (documents and
// highlighted snippets, or without snippets when plain), dedupe, rerank.
func enrich(ctx context.Context, tracer trace.Tracer, store Store, c messages.Candidates, cfg Config, plain bool) ([]messages.Document, error) {
	scored, marks, err := load(ctx, tracer, store, c, cfg, plain)
	if err != nil {
		return nil, err
	}

	_, span := tracer.Start(ctx, "dedupe")
	scored, dropped := rerank.Dedupe(scored, cfg.DuplicateThreshold)
	span.SetAttributes(otelnames.EnrichDuplicates.Int(dropped), otelnames.EnrichDocuments.Int(len(scored)))
	span.End()

	_, span = tracer.Start(ctx, otelnames.SpanRerank)
	before := make([]string, len(scored))
	for i, s := range scored {
		before[i] = s.Doc.ID
	}
	scored = rerank.Rerank(c.Query, scored)
	moved := 0
	for i, s := range scored {
		if before[i] != s.Doc.ID {
			moved++
		}
	}
	span.SetAttributes(otelnames.EnrichDocuments.Int(len(scored)), otelnames.EnrichReordered.Int(moved))
	span.End()

	docs := make([]messages.Document, len(scored))
	for i, s := range scored {
		docs[i] = messages.Document{
			ID:         s.Doc.ID,
			Title:      s.Doc.Title,
			Score:      s.Score,
			Snippet:    s.Snippet,
			URL:        s.Doc.URL,
			Source:     s.Doc.Source,
			Kind:       s.Doc.Kind,
			ImportPath: s.Doc.ImportPath,
			Metadata:   s.Doc.Metadata,
			Version:    marks[s.Doc.ID].version,
			StaleScore: marks[s.Doc.ID].stale,
		}
	}
	return docs, nil
}

// mark is what the result says of a loaded document's version.
type mark struct {
	// version is the version of the document loaded, its title and
	// snippet; stale that retrieval scored another one.
	version string
	stale   bool
}

// load runs the load documents span: it highlights the candidates'
// documents and returns them scored by retrieval, best first, with their
// marks by id (none when store is not a consumers.Versioner). A candidate
// not in the store is left out and counted as missing: deleted since
// retrieval found it, or not applied to this index yet.
//
// When store is a consumers.Versioner, the version a document is returned
// at is the hash (search.Document.Hash) of the very document Highlight
// returned and made the snippet from, never a version read in another
// call: the document may change between two calls (and change back, so
// reading the version before and after would not do), while the hash of
// what was highlighted is its version by definition. A document whose
// version differs from the candidate's is kept, marked stale_score and
// counted as changed; one the store no longer has after highlighting
// (Version reports none) is dropped as missing, so a deleted document is
// never returned. Hashing costs a few microseconds per typical document.
//
// When plain, the documents are loaded with empty snippets, through the
// store's DocumentLoader, and the span says so (otelnames.Degraded).
func load(ctx context.Context, tracer trace.Tracer, store Store, c messages.Candidates, cfg Config, plain bool) ([]rerank.Scored, map[string]mark, error) {
	ids := make([]string, len(c.Candidates))
	for i, cand := range c.Candidates {
		ids[i] = cand.DocID
	}
	lctx, span := tracer.Start(ctx, otelnames.SpanLoadDocuments, trace.WithAttributes(redact.Request(c.RequestID), otelnames.EnrichCandidates.Int(len(ids))))
	defer span.End()
	var loaded map[string]search.Highlighted
	var err error
	if plain {
		span.SetAttributes(otelnames.Degraded.String(messages.DroppedSnippets))
		loaded = loadPlain(store.(DocumentLoader), ids)
	} else {
		loaded, err = store.Highlight(lctx, c.Query, ids, cfg.SnippetRunes)
	}
	if err != nil {
		// A store's error may quote the query: it must not reach spans,
		// logs or the dead-letter reason.
		err = consumers.RedactError(err, c.Query)
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return nil, nil, fmt.Errorf("load documents: %w", err)
	}
	versions, versioned := store.(consumers.Versioner)
	var marks map[string]mark
	if versioned {
		marks = make(map[string]mark, len(loaded))
	}
	scored := make([]rerank.Scored, 0, len(ids))
	changed := 0
	for _, cand := range c.Candidates {
		h, ok := loaded[cand.DocID]
		if !ok {
			continue // gone from the index since retrieval: left out
		}
		if versioned {
			if _, ok := versions.Version(cand.DocID); !ok {
				continue // deleted since it was highlighted: left out
			}
			// The version stored with the document read, if the store
			// says; otherwise worked out from its content.
			m := mark{version: h.Version}
			if m.version == "" {
				m.version = h.Document.Hash()
			}
			if m.stale = cand.Version != "" && cand.Version != m.version; m.stale {
				changed++
			}
			marks[cand.DocID] = m
		}
		scored = append(scored, rerank.Scored{Doc: h.Document, Snippet: h.Snippet, BM25: cand.Score})
	}
	missing := len(ids) - len(scored)
	span.SetAttributes(otelnames.EnrichLoaded.Int(len(scored)), otelnames.EnrichMissing.Int(missing))
	if versioned {
		span.SetAttributes(otelnames.EnrichChanged.Int(changed))
		if missing+changed > 0 {
			span.AddEvent(otelnames.EventStaleCandidates, trace.WithAttributes(
				otelnames.EnrichMissing.Int(missing), otelnames.EnrichChanged.Int(changed)))
		}
	}
	return scored, marks, nil
}

// loadPlain loads the documents ids without snippets; one the loader does
// not have is left out, as Highlight leaves it out.
func loadPlain(l DocumentLoader, ids []string) map[string]search.Highlighted {
	out := make(map[string]search.Highlighted, len(ids))
	for _, id := range ids {
		if d, ok := l.Document(id); ok {
			out[id] = search.Highlighted{Document: d}
		}
	}
	return out
}
