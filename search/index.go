package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
)

// Keys of the values kretrieve keeps in the index's internal storage.
var (
	internalName   = []byte("kretrieve.name")
	internalFormat = []byte("kretrieve.format")
)

// format is the version of the index layout (mapping and field names) that
// this package writes and reads. Open refuses other versions.
const format = "1"

// openTimeout bounds how long Open waits for the index's bolt lock, which is
// only ever held exclusively by a process writing the index.
const openTimeout = "10s"

// Index is a bleve index of Documents, scored with BM25. It is safe for
// concurrent use; Close it when done.
type Index struct {
	idx  bleve.Index
	name string
	n    int

	closeOnce sync.Once
	closeErr  error
}

// Build creates an on-disk index named name at dir from docs, in batches,
// and closes it. dir must not exist or must be an empty directory.
//
// The index is written to a temporary directory next to dir and renamed to
// dir once complete, so Open never sees a partial index and a failed or
// cancelled Build leaves dir as it was. Documents must have unique, non-empty
// ids. ctx is checked between batches (see WithBatchSize).
func Build(ctx context.Context, dir, name string, docs []Document, opts ...Option) (err error) {
	cfg := newConfig(opts)
	if dir == "" {
		return errors.New("build index: empty directory name")
	}
	if err := checkDocs(docs); err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	if err := checkEmptyDir(dir); err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	// Build in a fresh directory next to dir, on the same file system.
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil && err == nil {
			err = fmt.Errorf("build index: %w", rerr)
		}
	}()
	m, err := newMapping()
	if err != nil {
		return fmt.Errorf("build index: mapping: %w", err)
	}
	built := filepath.Join(tmp, "index")
	idx, err := bleve.NewUsing(built, m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	if err := fill(ctx, idx, name, docs, cfg.batchSize); err != nil {
		_ = idx.Close()
		return fmt.Errorf("build index: %w", err)
	}
	if err := compact(ctx, idx); err != nil {
		_ = idx.Close()
		return fmt.Errorf("build index: compact: %w", err)
	}
	if err := idx.Close(); err != nil {
		return fmt.Errorf("build index: close: %w", err)
	}
	// dir is absent or empty (checked above); an empty dir must go before
	// the rename on systems that do not replace empty directories.
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("build index: %w", err)
	}
	if err := os.Rename(built, dir); err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	return nil
}

// Open opens the on-disk index at dir, written by Build, read-only. Several
// Index values, in one process or in several, may have the same directory
// open at once.
func Open(dir string) (*Index, error) {
	idx, err := bleve.OpenUsing(dir, map[string]interface{}{
		"read_only":    true,
		"bolt_timeout": openTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	ix, err := newIndex(idx)
	if err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	return ix, nil
}

// NewMemory indexes docs in memory under the given name. Documents must have
// unique, non-empty ids. ctx is checked between batches (see WithBatchSize).
func NewMemory(ctx context.Context, name string, docs []Document, opts ...Option) (*Index, error) {
	cfg := newConfig(opts)
	if err := checkDocs(docs); err != nil {
		return nil, fmt.Errorf("new index: %w", err)
	}
	m, err := newMapping()
	if err != nil {
		return nil, fmt.Errorf("new index: mapping: %w", err)
	}
	// Scorch, not bleve.NewMemOnly's upsidedown store: only scorch scores
	// with BM25.
	idx, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("new index: %w", err)
	}
	if err := fill(ctx, idx, name, docs, cfg.batchSize); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("new index: %w", err)
	}
	ix, err := newIndex(idx)
	if err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("new index: %w", err)
	}
	return ix, nil
}

// Close releases the index. Searches after Close fail; closing again
// returns the first Close's result.
func (ix *Index) Close() error {
	ix.closeOnce.Do(func() { ix.closeErr = ix.idx.Close() })
	return ix.closeErr
}

// Name returns the name the index was built with.
func (ix *Index) Name() string { return ix.name }

// Len returns the number of documents in the index.
func (ix *Index) Len() int { return ix.n }

// Document returns the stored document with the given id. It reports false
// if there is no such document or it could not be read.
func (ix *Index) Document(id string) (Document, bool) {
	if id == "" {
		return Document{}, false
	}
	d, err := ix.idx.Document(id)
	if err != nil || d == nil {
		return Document{}, false
	}
	return fromStored(d), true
}

// newIndex wraps idx, reading the name and document count.
func newIndex(idx bleve.Index) (*Index, error) {
	f, err := idx.GetInternal(internalFormat)
	if err != nil {
		return nil, err
	}
	if string(f) != format {
		return nil, fmt.Errorf("not a kretrieve index (format %q, want %q)", f, format)
	}
	name, err := idx.GetInternal(internalName)
	if err != nil {
		return nil, err
	}
	n, err := idx.DocCount()
	if err != nil {
		return nil, err
	}
	return &Index{idx: idx, name: string(name), n: int(n)}, nil
}

// fill indexes docs in batches, then records name and format.
func fill(ctx context.Context, idx bleve.Index, name string, docs []Document, batchSize int) error {
	contexts := packageContexts(docs)
	b := idx.NewBatch()
	for i, d := range docs {
		if err := b.Index(d.ID, bleveDoc(d, contexts[d.ImportPath])); err != nil {
			return fmt.Errorf("document %q: %w", d.ID, err)
		}
		if b.Size() < batchSize && i < len(docs)-1 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := idx.Batch(b); err != nil {
			return err
		}
		b.Reset()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.SetInternal(internalName, []byte(name))
	b.SetInternal(internalFormat, []byte(format))
	return idx.Batch(b)
}

// compact merges the index's segments into one, which makes opening and
// searching the finished, read-only index faster.
func compact(ctx context.Context, idx bleve.Index) error {
	adv, err := idx.Advanced()
	if err != nil {
		return err
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	// ForceMerge does not watch ctx while it waits for the merger (which
	// retries failed merges); closing the index, as Build does on error,
	// releases it.
	done := make(chan error, 1)
	go func() { done <- s.ForceMerge(ctx, nil) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkDocs rejects empty and duplicate ids.
func checkDocs(docs []Document) error {
	seen := make(map[string]struct{}, len(docs))
	for i, d := range docs {
		if d.ID == "" {
			return fmt.Errorf("document %d: empty id", i)
		}
		if _, dup := seen[d.ID]; dup {
			return fmt.Errorf("document %d: duplicate id %q", i, d.ID)
		}
		seen[d.ID] = struct{}{}
	}
	return nil
}

// checkEmptyDir reports an error unless dir is absent or an empty directory.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// fromStored rebuilds a Document from its stored fields.
func fromStored(d index.Document) Document {
	doc := Document{ID: d.ID()}
	d.VisitFields(func(f index.Field) {
		v := string(f.Value())
		switch name := f.Name(); name {
		case fieldTitle:
			doc.Title = v
		case fieldBody:
			doc.Body = v
		case fieldKind:
			doc.Kind = v
		case fieldImportPath:
			doc.ImportPath = v
		case fieldURL:
			doc.URL = v
		case fieldSource:
			doc.Source = v
		default:
			if key, ok := strings.CutPrefix(name, fieldMetadata+"."); ok {
				if doc.Metadata == nil {
					doc.Metadata = make(map[string]string)
				}
				doc.Metadata[key] = v
			}
		}
	})
	return doc
}
