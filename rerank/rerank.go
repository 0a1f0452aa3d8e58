// SPDX-License-Identifier: Apache-2.0

package rerank

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/kretrieve/kretrieve/search"
)

// Scored is a candidate document being re-ranked.
type Scored struct {
	Doc     search.Document
	Snippet string
	// BM25 is the retrieval score; Score the final one.
	BM25  float64
	Score float64
}

// Re-ranking weights. The final score is
//
//	score = bm25/max(bm25) + NameBoost·name + TitleBoost·title
//
// where bm25/max(bm25) puts the retrieval score in (0, 1] within the request;
// name is 1 when the document's identifier (the last element of its title:
// "ParseQuery" of "net/url.ParseQuery", never a package name) is a word of
// the query as spelt, or in any case for compound identifiers ("parsequery");
// title is 1 when the whole qualified title is in the query
// ("net/url.ParseQuery", "strings.Builder", "net/url"). A user who
// names the API gets it first, while a query in plain words keeps the BM25
// order: boosting partial word overlaps was measured to hurt (docs/retrieval.md,
// "Retrieval quality").
const (
	NameBoost  = 0.5
	TitleBoost = 1.0
)

// Rerank orders docs by the combined score (ties by BM25, then id) and sets
// Score. It does not drop documents, so recall at the list's length is
// unchanged.
func Rerank(query string, docs []Scored) []Scored {
	if len(docs) == 0 {
		return docs
	}
	qwords := wordSet(query)
	qexact := exactWords(query)
	qtokens := tokenSet(query)
	top := 0.0
	for _, d := range docs {
		top = math.Max(top, d.BM25)
	}
	for i := range docs {
		norm := 0.0
		if top > 0 {
			norm = docs[i].BM25 / top
		}
		docs[i].Score = norm + NameBoost*nameMatch(docs[i].Doc, qwords, qexact) + TitleBoost*titleMatch(docs[i].Doc.Title, qtokens)
	}
	sort.SliceStable(docs, func(a, b int) bool {
		if docs[a].Score != docs[b].Score {
			return docs[a].Score > docs[b].Score
		}
		if docs[a].BM25 != docs[b].BM25 {
			return docs[a].BM25 > docs[b].BM25
		}
		return docs[a].Doc.ID < docs[b].Doc.ID
	})
	return docs
}

// nameMatch is 1 when the document's identifier is a word of the query:
// spelt exactly ("Atoi", "Read"), or in any case when it is a compound
// identifier ("parsequery" for ParseQuery) that no plain English word is.
// "read" therefore does not match every Read method.
func nameMatch(d search.Document, qwords, qexact map[string]bool) float64 {
	name := identifier(d.Title)
	if name == "" || d.Kind == "package" {
		// Package names are everyday words ("time", "sort", "context").
		return 0
	}
	if qexact[name] || compound(name) && qwords[strings.ToLower(name)] {
		return 1
	}
	return 0
}

// compound reports whether an identifier has an upper-case letter or a digit
// after its first rune (ParseQuery, Int64, WaitGroup).
func compound(name string) bool {
	for i, r := range name {
		if i > 0 && (unicode.IsUpper(r) || unicode.IsDigit(r)) {
			return true
		}
	}
	return false
}

// exactWords is the set of s's letter/digit runs as written.
func exactWords(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		m[w] = true
	}
	return m
}

// titleMatch is 1 when the whole title is one of the query's
// whitespace-separated tokens (trailing punctuation and "()" ignored) and is
// qualified ("strings.Builder", "net/url"), not an everyday word.
func titleMatch(title string, qtokens map[string]bool) float64 {
	if strings.ContainsAny(title, "./") && qtokens[strings.ToLower(title)] {
		return 1
	}
	return 0
}

// tokenSet lower-cases the query's whitespace-separated tokens, trimming
// surrounding punctuation but keeping inner dots and slashes ("net/url.ParseQuery").
func tokenSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(s) {
		t = strings.TrimSuffix(strings.Trim(t, "\"'`,;:!?()[]{}"), "()")
		t = strings.TrimRight(t, ".")
		if t != "" {
			m[strings.ToLower(t)] = true
		}
	}
	return m
}

// wordSet is the set of s's lower-cased letter/digit runs, unsplit
// ("ParseQuery" stays "parsequery").
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		m[strings.ToLower(w)] = true
	}
	return m
}

// DefaultDuplicateThreshold is the body similarity at or above which two
// documents are near-duplicates.
const DefaultDuplicateThreshold = 0.9

// Dedupe is DedupeMap without the map.
func Dedupe(docs []Scored, threshold float64) ([]Scored, int) {
	kept, dups := DedupeMap(docs, threshold)
	return kept, len(dups)
}

// DedupeMap drops near-duplicates: a document whose body's word set has a
// Jaccard similarity ≥ threshold with that of a better-ranked document of the
// same kind and identifier (docs must be best first): the same API copied
// into several packages, or the same page indexed twice. Empty bodies are
// never duplicates. It returns the kept documents and, for each dropped
// one, the id of the kept document it duplicates.
func DedupeMap(docs []Scored, threshold float64) ([]Scored, map[string]string) {
	type seen struct {
		id    string
		key   string
		words map[string]bool
	}
	kept := docs[:0:0]
	dups := map[string]string{}
	var prev []seen
	for _, d := range docs {
		cur := seen{id: d.Doc.ID, key: d.Doc.Kind + "\x00" + identifier(d.Doc.Title), words: wordSet(d.Doc.Body)}
		dup := false
		if len(cur.words) > 0 {
			for _, p := range prev {
				if p.key == cur.key && jaccard(cur.words, p.words) >= threshold {
					dups[cur.id] = p.id
					dup = true
					break
				}
			}
		}
		if !dup {
			kept = append(kept, d)
			prev = append(prev, cur)
		}
	}
	return kept, dups
}

// identifier is the last element of a title: "ParseQuery" of "net/url.ParseQuery".
func identifier(title string) string {
	if i := strings.LastIndexAny(title, "./"); i >= 0 {
		return title[i+1:]
	}
	return title
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
