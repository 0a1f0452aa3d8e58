package search

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"unicode"
)


// Hit is a scored search result.
type Hit struct {
	ID    string
	Score float64
}

// BM25 parameters (the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Index is an in-memory BM25 index. It is immutable after NewIndex and safe
// for concurrent use.
type Index struct {
	name   string
	docs   []Document
	byID   map[string]int
	terms  []map[string]int // per document: term -> frequency
	lens   []int
	avgLen float64
	df     map[string]int
}

// NewIndex indexes docs. Documents with an empty or duplicate id are an error.
func NewIndex(name string, docs []Document) (*Index, error) {
	ix := &Index{name: name, docs: docs, byID: make(map[string]int, len(docs)), df: make(map[string]int)}
	total := 0
	for i, d := range docs {
		if d.ID == "" {
			return nil, fmt.Errorf("document %d: empty id", i)
		}
		if _, dup := ix.byID[d.ID]; dup {
			return nil, fmt.Errorf("document %d: duplicate id %q", i, d.ID)
		}
		ix.byID[d.ID] = i
		tf := make(map[string]int)
		n := 0
		for _, t := range Tokenize(d.Title + " " + d.Body) {
			tf[t]++
			n++
		}
		for t := range tf {
			ix.df[t]++
		}
		ix.terms = append(ix.terms, tf)
		ix.lens = append(ix.lens, n)
		total += n
	}
	if len(docs) > 0 {
		ix.avgLen = float64(total) / float64(len(docs))
	}
	return ix, nil
}

// Name returns the index name.
func (ix *Index) Name() string { return ix.name }

// Len returns the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Document returns the document with the given id.
func (ix *Index) Document(id string) (Document, bool) {
	i, ok := ix.byID[id]
	if !ok {
		return Document{}, false
	}
	return ix.docs[i], true
}

// Search returns up to k documents ranked by BM25 score, best first; ties
// are broken by id so results are deterministic.
func (ix *Index) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	if k <= 0 {
		return nil, errors.New("search: k must be positive")
	}
	qterms := uniq(Tokenize(query))
	var hits []Hit
	n := float64(len(ix.docs))
	for i, tf := range ix.terms {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		score := 0.0
		for _, t := range qterms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			norm := bm25K1 * (1 - bm25B + bm25B*float64(ix.lens[i])/ix.avgLen)
			score += idf * f * (bm25K1 + 1) / (f + norm)
		}
		if score > 0 {
			hits = append(hits, Hit{ID: ix.docs[i].ID, Score: score})
		}
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].Score != hits[b].Score {
			return hits[a].Score > hits[b].Score
		}
		return hits[a].ID < hits[b].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// Tokenize lower-cases s and splits it into letter/digit runs.
func Tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func uniq(ts []string) []string {
	seen := make(map[string]bool, len(ts))
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

//go:embed demo_corpus.jsonl
var demoCorpus []byte

// DemoIndex returns an index over the embedded demo corpus: the synopses of
// the Go standard library's packages.
func DemoIndex() (*Index, error) {
	docs, err := ReadJSONL(bytes.NewReader(demoCorpus))
	if err != nil {
		return nil, fmt.Errorf("demo corpus: %w", err)
	}
	for i := range docs {
		docs[i].Source = "go-stdlib"
	}
	return NewIndex("go-stdlib-demo", docs)
}

// ReadJSONL reads one JSON Document per line; blank lines are skipped.
func ReadJSONL(r io.Reader) ([]Document, error) {
	var docs []Document
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var d Document
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return docs, nil
}
