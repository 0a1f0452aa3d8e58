package search

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
)

//go:embed demo_corpus.jsonl
var demoCorpus []byte

// DemoName is the name of the index DemoIndex returns.
const DemoName = "go-stdlib-demo"

// DemoDocuments returns the documents of the embedded demo corpus: the
// synopses of the Go standard library's packages.
func DemoDocuments() ([]Document, error) {
	docs, err := ReadJSONL(bytes.NewReader(demoCorpus))
	if err != nil {
		return nil, fmt.Errorf("demo corpus: %w", err)
	}
	for i := range docs {
		docs[i].Source = "go-stdlib"
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
func DemoIndex() (*Index, error) {
	docs, err := DemoDocuments()
	if err != nil {
		return nil, err
	}
	return NewMemory(context.Background(), DemoName, docs)
}
