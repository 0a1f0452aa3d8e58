// SPDX-License-Identifier: Apache-2.0

// Package corpustest holds the demo corpus tests and benchmarks index: the
// synopses of the Go standard library's packages, embedded, read with
// package corpus's JSONL reader (the one reader of document files) and
// indexed in memory by package search. It is a test helper; nothing in the
// binary imports it.
package corpustest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/search"
)

//go:embed demo_corpus.jsonl
var demoCorpus []byte

// DemoName is the name of the index DemoIndex returns.
const DemoName = "go-stdlib-demo"

// DemoSource is the search.Document.Source of the demo documents.
const DemoSource = "go-stdlib"

// DemoDocuments returns the documents of the embedded demo corpus: the
// synopses of the Go standard library's packages, each of kind "package"
// with its ID as import path.
func DemoDocuments() ([]search.Document, error) {
	docs, _, err := corpus.ReadJSONL(bytes.NewReader(demoCorpus), true)
	if err != nil {
		return nil, fmt.Errorf("demo corpus: %w", err)
	}
	for i := range docs {
		docs[i].Source = DemoSource
		if docs[i].Kind == "" {
			docs[i].Kind = "package"
		}
		if docs[i].ImportPath == "" {
			docs[i].ImportPath = docs[i].ID
		}
	}
	return docs, nil
}

// DemoIndex returns an in-memory index, named DemoName, over the embedded
// demo corpus (see DemoDocuments). Close it when done.
func DemoIndex() (*search.Index, error) {
	docs, err := DemoDocuments()
	if err != nil {
		return nil, err
	}
	return search.NewMemory(context.Background(), DemoName, docs)
}
