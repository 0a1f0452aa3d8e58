// Package enrichment is the enrichment worker's handler: it turns candidates
// into result documents (title, url, snippet around the query terms) and
// publishes the result.
package enrichment

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/attrs"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// ScopeName is the instrumentation scope of the enrichment spans.
const ScopeName = "github.com/kretrieve/kretrieve/consumers/enrichment"

// Span attributes of the enrich span.
const (
	CandidatesAttr = attribute.Key("kretrieve.enrich.candidates")
	DocumentsAttr  = attribute.Key("kretrieve.enrich.documents")
	MissingAttr    = attribute.Key("kretrieve.enrich.missing")
)

// DefaultSnippetRunes is the snippet length when Config.SnippetRunes is 0.
const DefaultSnippetRunes = 200

// Store serves documents by id.
type Store interface {
	Document(id string) (search.Document, bool)
}

// Config configures the handler.
type Config struct {
	// ResultsTopic is where results are published. Default:
	// messages.DefaultResultsTopic.
	ResultsTopic string
	// SnippetRunes is the snippet length. Default: DefaultSnippetRunes.
	SnippetRunes int
	// TracerProvider creates the enrich span. Default: the global provider.
	TracerProvider trace.TracerProvider
}

// Handler returns the enrichment handler over store.
func Handler(store Store, cfg Config) consumers.Handler {
	if cfg.ResultsTopic == "" {
		cfg.ResultsTopic = messages.DefaultResultsTopic
	}
	if cfg.SnippetRunes == 0 {
		cfg.SnippetRunes = DefaultSnippetRunes
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = otel.GetTracerProvider()
	}
	tracer := cfg.TracerProvider.Tracer(ScopeName)
	return func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		c, err := messages.DecodeCandidates(msg.Record.Value)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		_, span := tracer.Start(ctx, "enrich", trace.WithAttributes(
			attrs.RequestID.String(c.RequestID),
			CandidatesAttr.Int(len(c.Candidates)),
		))
		docs := make([]messages.Document, 0, len(c.Candidates))
		missing := 0
		for _, cand := range c.Candidates {
			d, ok := store.Document(cand.DocID)
			if !ok {
				// The index changed between retrieval and enrichment: the
				// document is gone, so it is left out of the result.
				missing++
				continue
			}
			docs = append(docs, messages.Document{
				ID:      d.ID,
				Title:   d.Title,
				Score:   cand.Score,
				Snippet: search.Snippet(d.Body, c.Query, cfg.SnippetRunes),
				URL:     d.URL,
				Source:  d.Source,
			})
		}
		span.SetAttributes(DocumentsAttr.Int(len(docs)), MissingAttr.Int(missing))
		span.End()

		timings := c.Timings
		timings.EnrichmentQueueMS = float64(msg.QueueWait.Wait) / float64(time.Millisecond)
		timings.EnrichmentMS = float64(time.Since(start)) / float64(time.Millisecond)
		value, err := messages.EncodeResult(messages.Result{RequestID: c.RequestID, Documents: docs, Timings: timings})
		if err != nil {
			return nil, consumers.Permanent(fmt.Errorf("encode result: %w", err))
		}
		return []*kgo.Record{{Topic: cfg.ResultsTopic, Key: []byte(c.RequestID), Value: value}}, nil
	}
}
