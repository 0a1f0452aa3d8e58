// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"time"

	"github.com/kretrieve/kretrieve/messages"
)

// The optional capabilities of a stage handler's index (a
// retrieval.Searcher, an enrichment.Store): the one home of both, which
// the handlers check by type assertion, so that an index without them (the
// static *search.Index) still serves and the handlers behave as before.

// Versioner is an index that knows the version of each of its documents.
// Version returns the version of the document id as stored now, and
// false when the index has no such document (never had it, or it was
// deleted). The version must be search.Document.Hash of the document the
// index returns for id, so that a handler can compare it with the hash of
// a document it loaded.
type Versioner interface {
	Version(id string) (string, bool)
}

// FreshnessReporter is an index that follows the documents topic.
// Freshness returns its applied position (the sum, over the topic's
// partitions, of the next offset applied) and the record timestamp of the
// newest document it has applied; ok is false when it has no position to
// report yet (nothing applied, or no timestamp known).
type FreshnessReporter interface {
	Freshness() (position int64, newest time.Time, ok bool)
}

// WithFreshness returns received with the index_freshness entry of stage
// for index at now added, or in place of the entry of the same name (see
// messages.IndexFreshness.With). It returns received unchanged when index
// is not a [FreshnessReporter], reports nothing, or reports a negative
// position or a zero newest time (a broken reporter), and when the list
// is full (messages.MaxStages entries, none named stage): freshness is
// informational and never makes a payload invalid.
func WithFreshness(received messages.IndexFreshness, index any, stage string, now time.Time) messages.IndexFreshness {
	fr, ok := index.(FreshnessReporter)
	if !ok {
		return received
	}
	position, newest, ok := fr.Freshness()
	if !ok || position < 0 || newest.IsZero() {
		return received
	}
	if _, has := received.Stage(stage); !has && len(received) >= messages.MaxStages {
		return received
	}
	return received.With(messages.StageFreshness{
		Stage:               stage,
		Position:            position,
		NewestDocumentAgeMS: float64(now.Sub(newest)) / float64(time.Millisecond),
	})
}
