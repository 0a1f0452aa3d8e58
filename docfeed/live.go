// SPDX-License-Identifier: Apache-2.0

package docfeed

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/kretrieve/kretrieve/search"
)

// Live is the index a Follower keeps up to date, for the stages' handlers:
// it searches and highlights the index the Follower currently applies to
// (a rebuild replaces it). It is safe for concurrent use.
type Live struct {
	cur atomic.Pointer[search.Index]
}

// index returns the current index.
func (l *Live) index() *search.Index { return l.cur.Load() }

// Search finds the k best documents for query.
func (l *Live) Search(ctx context.Context, query string, k int) ([]search.Hit, error) {
	return l.index().Search(ctx, query, k)
}

// Highlight returns highlighted fragments of the documents ids for query.
func (l *Live) Highlight(ctx context.Context, query string, ids []string, maxRunes int) (map[string]search.Highlighted, error) {
	return l.index().Highlight(ctx, query, ids, maxRunes)
}

// Name returns the index's name.
func (l *Live) Name() string { return l.index().Name() }

// Len returns the number of documents in the index now.
func (l *Live) Len() int { return l.index().Len() }

// Document returns the stored document id.
func (l *Live) Document(id string) (search.Document, bool) { return l.index().Document(id) }

// Version returns the version (search.Document.Hash) of document id.
func (l *Live) Version(id string) (string, bool) { return l.index().Version(id) }

// Digest returns the digest of the index's documents.
func (l *Live) Digest() search.Digest { return l.index().Digest() }

// Position returns where the index stands in the documents topic.
func (l *Live) Position() search.Position { return l.index().Position() }

// Freshness reports where the index stands, for the index_freshness stamp
// of results (consumers.FreshnessReporter): the sum of the next offsets
// applied over the partitions, and the timestamp of the newest document
// record applied (search.Position.Newest, kept with the offsets, so it is
// never older than a document a search found before); ok is false before
// the first one.
func (l *Live) Freshness() (position int64, newest time.Time, ok bool) {
	pos := l.Position()
	if pos.Newest.IsZero() {
		return 0, time.Time{}, false
	}
	for _, o := range pos.Offsets {
		position += o
	}
	return position, pos.Newest, true
}
