// SPDX-License-Identifier: Apache-2.0

package search

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/highlight"
	htmlformat "github.com/blevesearch/bleve/v2/search/highlight/format/html"
	"github.com/blevesearch/bleve/v2/search/highlight/fragmenter/simple"
	simplehl "github.com/blevesearch/bleve/v2/search/highlight/highlighter/simple"
)

// Marks around matched terms in a Highlighted snippet.
const (
	MarkStart = "<mark>"
	MarkEnd   = "</mark>"
)

// Highlighted is a document with a snippet of its body.
type Highlighted struct {
	// Document is the stored document.
	Document Document
	// Version is Document's version (Document.Hash) as stored with it,
	// read at the same time; empty when the loader does not know it.
	Version string
	// Snippet is an HTML fragment of about maxRunes runes of the body: the
	// text is HTML-escaped (as by html.EscapeString, so "<" is "&lt;" and
	// "&" is "&amp;"), terms matching the query are wrapped in
	// MarkStart…MarkEnd ("<mark>…</mark>"), and "…" stands where text was
	// cut. It can be inserted into HTML as is; for plain text, drop the marks
	// and html.UnescapeString the rest.
	Snippet string
}

// Highlight returns, for each of ids that is in the index, the document and
// a snippet of its body around the query's terms with the matches marked
// (see Highlighted.Snippet), made by bleve's highlighter with a fragment of
// maxRunes runes. A document whose body does not match gets the start of its
// body, from Snippet, escaped the same way. Ids not in the index are left
// out of the map. query has the limits of Search; maxRunes must be positive.
// While Apply changes the index, each document is returned at one version:
// its snippet is always of the returned Document's body.
func (ix *Index) Highlight(ctx context.Context, query string, ids []string, maxRunes int) (map[string]Highlighted, error) {
	if maxRunes < 1 {
		return nil, fmt.Errorf("highlight: snippet size %d: %w", maxRunes, ErrInvalidQuery)
	}
	if err := checkQuery(query); err != nil {
		return nil, fmt.Errorf("highlight: %w", err)
	}
	out := make(map[string]Highlighted, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if strings.TrimSpace(query) != "" {
		if err := ix.highlightMatches(ctx, query, ids, maxRunes, out); err != nil {
			return nil, fmt.Errorf("highlight: %w", err)
		}
	}
	// The rest: ids whose body did not match, and ids not in the index.
	for _, id := range ids {
		if _, done := out[id]; done {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("highlight: %w", err)
		}
		if d, version, ok := ix.document(id); ok {
			out[id] = Highlighted{Document: d, Version: version, Snippet: html.EscapeString(Snippet(d.Body, query, maxRunes))}
		}
	}
	return out, nil
}

// highlightMatches searches the body field of ids for query and adds the
// documents that match to out, with their best fragment.
func (ix *Index) highlightMatches(ctx context.Context, query string, ids []string, maxRunes int, out map[string]Highlighted) error {
	body, _, err := ix.fieldQuery(fieldBody, query, 1)
	if err != nil {
		return err
	}
	q := bleve.NewConjunctionQuery(bleve.NewDocIDQuery(ids), body)
	req := bleve.NewSearchRequestOptions(q, len(ids), 0, false)
	req.IncludeLocations = true
	// The version each hit matched at, from the search's own snapshot: a
	// document Apply changed since is stored at another version, and the
	// match locations would not fit its body.
	req.Fields = []string{fieldVersion}
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return err
	}
	hl := simplehl.NewHighlighter(
		wordFragmenter{simple.NewFragmenter(maxRunes)},
		htmlformat.NewFragmentFormatter(MarkStart, MarkEnd),
		simplehl.DefaultSeparator,
	)
	for _, dm := range res.Hits {
		stored, err := ix.idx.Document(dm.ID)
		if err != nil {
			return err
		}
		if stored == nil { // deleted since the search
			continue
		}
		doc, version := fromStored(stored)
		if matched, _ := dm.Fields[fieldVersion].(string); matched != version {
			continue // changed since the search: Highlight falls back to Snippet
		}
		if frag := hl.BestFragmentInField(dm, stored, fieldBody); frag != "" {
			out[dm.ID] = Highlighted{Document: doc, Version: version, Snippet: frag}
		}
	}
	return nil
}

// wordFragmenter trims the fragments of another fragmenter to whole words:
// bleve's simple fragmenter counts runes and may cut words in two. A
// fragment never loses a matched term.
type wordFragmenter struct {
	inner highlight.Fragmenter
}

// Fragment implements highlight.Fragmenter.
func (w wordFragmenter) Fragment(orig []byte, ot highlight.TermLocations) []*highlight.Fragment {
	frags := w.inner.Fragment(orig, ot)
	for _, f := range frags {
		if f.Start < 0 || f.End > len(orig) || f.Start >= f.End {
			continue
		}
		// The matched terms inside f span [lo, hi).
		lo, hi := f.End, f.Start
		for _, tl := range ot {
			if tl != nil && tl.Start >= f.Start && tl.End <= f.End {
				lo, hi = min(lo, tl.Start), max(hi, tl.End)
			}
		}
		if lo > hi { // no term: a fragment from the start of the text
			lo, hi = f.Start, f.Start
		}
		if f.Start > 0 && !spaceBefore(orig, f.Start) {
			if i := bytes.IndexFunc(orig[f.Start:lo], unicode.IsSpace); i >= 0 {
				f.Start += i
			}
		}
		for f.Start < lo && spaceAt(orig, f.Start) {
			_, size := utf8.DecodeRune(orig[f.Start:])
			f.Start += size
		}
		if f.End < len(orig) && !spaceAt(orig, f.End) {
			if i := bytes.LastIndexFunc(orig[hi:f.End], unicode.IsSpace); i >= 0 {
				f.End = hi + i
			}
		}
		for f.End > hi && spaceBefore(orig, f.End) {
			_, size := utf8.DecodeLastRune(orig[:f.End])
			f.End -= size
		}
	}
	return frags
}

// spaceAt reports whether the rune starting at b[i] is white space.
func spaceAt(b []byte, i int) bool {
	r, _ := utf8.DecodeRune(b[i:])
	return unicode.IsSpace(r)
}

// spaceBefore reports whether the rune ending at b[i] is white space.
func spaceBefore(b []byte, i int) bool {
	r, _ := utf8.DecodeLastRune(b[:i])
	return unicode.IsSpace(r)
}
