// SPDX-License-Identifier: Apache-2.0

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

// Keys of the values kretrieve keeps in the index's internal storage. The
// position and digest are written in the same bleve batch as the documents
// they describe (see Apply).
var (
	internalName     = []byte("kretrieve.name")
	internalFormat   = []byte("kretrieve.format")
	internalPosition = []byte("kretrieve.position")
	internalDigest   = []byte("kretrieve.digest")
)

// format is the version of the index layout (mapping, field names and
// internal keys) that this package writes and reads. Open refuses other
// versions. Format "2" stores each document's version and the index's
// Digest and Position; a format "1" index has none of them, so its digest
// could not be kept right and it must be rebuilt.
const format = "2"

// openTimeout bounds how long Open and OpenWritable wait for the index's
// bolt lock, which a process writing the index holds exclusively.
const openTimeout = "10s"

// Index is a bleve index of Documents, scored with BM25. It is safe for
// concurrent use: searches run while Apply changes a writable index. Close
// it when done.
type Index struct {
	idx      bleve.Index
	name     string
	writable bool

	// applyMu serialises Apply.
	applyMu sync.Mutex
	// stateMu guards pos and digest, the position and digest last read
	// from the index's internal storage, and the stored bytes they were
	// decoded from (see state).
	stateMu           sync.Mutex
	pos               Position
	digest            Digest
	rawPos, rawDigest []byte

	// versions caches Version's reads until the next Apply.
	versions versionCache

	closeOnce sync.Once
	closeErr  error
}

// Build creates an on-disk index named name at dir from docs, in batches,
// and closes it. dir must not exist or must be an empty directory.
//
// The index is written to a temporary directory next to dir and renamed to
// dir once complete, so Open never sees a partial index and a failed or
// cancelled Build leaves dir as it was. Documents must have unique, non-empty
// ids. ctx is checked between batches (see WithBatchSize). WithPosition
// stamps the index with the position in the documents topic that docs
// reflect.
func Build(ctx context.Context, dir, name string, docs []Document, opts ...Option) error {
	cfg := newConfig(opts)
	if err := checkDocs(docs); err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	if err := cfg.pos.check(); err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	err := writeDir(dir, func(idx bleve.Index) error {
		if err := fill(ctx, idx, name, docs, cfg); err != nil {
			return err
		}
		if err := compact(ctx, idx); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	return nil
}

// Create creates a new, empty on-disk index named name at dir and opens it
// for Apply, like OpenWritable. dir must not exist or must be an empty
// directory; as with Build, the index is made in a temporary directory and
// renamed into place, so a failed Create leaves dir as it was.
func Create(dir, name string) (*Index, error) {
	err := writeDir(dir, func(idx bleve.Index) error {
		return fill(context.Background(), idx, name, nil, newConfig(nil))
	})
	if err != nil {
		return nil, fmt.Errorf("create index: %w", err)
	}
	return OpenWritable(dir)
}

// writeDir makes an index at dir, which must be absent or empty: it creates
// the index in a temporary directory next to dir, has write fill it, closes
// it and renames it to dir. On error, dir is left as it was.
func writeDir(dir string, write func(bleve.Index) error) (err error) {
	if dir == "" {
		return errors.New("empty directory name")
	}
	if err := checkEmptyDir(dir); err != nil {
		return err
	}
	// Write in a fresh directory next to dir, on the same file system.
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dir)), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil && err == nil {
			err = rerr
		}
	}()
	m, err := newMapping()
	if err != nil {
		return fmt.Errorf("mapping: %w", err)
	}
	built := filepath.Join(tmp, "index")
	idx, err := bleve.NewUsing(built, m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return err
	}
	if err := write(idx); err != nil {
		_ = idx.Close()
		return err
	}
	if err := idx.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	// dir is absent or empty (checked above); an empty dir must go before
	// the rename on systems that do not replace empty directories.
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Rename(built, dir)
}

// Open opens the on-disk index at dir, written by Build or Create,
// read-only: Apply refuses to change it. Several Index values, in one
// process or in several, may have the same directory open at once, as long
// as none has it open with OpenWritable.
func Open(dir string) (*Index, error) {
	return openDir(dir, false)
}

// OpenWritable opens the on-disk index at dir, written by Build or Create,
// for Apply. It holds the directory's bolt lock exclusively: no other Index,
// in this process or another, may open dir until it is closed (an opener
// waits up to ten seconds for the lock, then fails).
func OpenWritable(dir string) (*Index, error) {
	return openDir(dir, true)
}

// openDir opens dir read-only or writable.
func openDir(dir string, writable bool) (*Index, error) {
	cfg := map[string]interface{}{"bolt_timeout": openTimeout}
	if !writable {
		cfg["read_only"] = true
	}
	idx, err := bleve.OpenUsing(dir, cfg)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	ix, err := newIndex(idx, writable)
	if err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	return ix, nil
}

// NewMemory indexes docs in memory under the given name. Documents must have
// unique, non-empty ids. ctx is checked between batches (see WithBatchSize).
// The index is writable: Apply changes it. WithPosition stamps it with the
// position in the documents topic that docs reflect. Scorch never merges an
// in-memory index's segments, so each Apply that changes documents adds one
// and searches slow down with their number (about 15× after 1000
// one-document Applies to 3,000 documents): an index that follows the
// documents topic for long belongs on disk (Create).
func NewMemory(ctx context.Context, name string, docs []Document, opts ...Option) (*Index, error) {
	cfg := newConfig(opts)
	if err := checkDocs(docs); err != nil {
		return nil, fmt.Errorf("new index: %w", err)
	}
	if err := cfg.pos.check(); err != nil {
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
	if err := fill(ctx, idx, name, docs, cfg); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("new index: %w", err)
	}
	ix, err := newIndex(idx, true)
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

// Len returns the number of documents the index holds now (0 once closed).
func (ix *Index) Len() int {
	n, err := ix.idx.DocCount()
	if err != nil {
		return 0
	}
	return int(n)
}

// Document returns the stored document with the given id. It reports false
// if there is no such document or it could not be read.
func (ix *Index) Document(id string) (Document, bool) {
	doc, _, ok := ix.document(id)
	return doc, ok
}

// document returns the stored document id and its stored version.
func (ix *Index) document(id string) (doc Document, version string, ok bool) {
	if id == "" {
		return Document{}, "", false
	}
	d, err := ix.idx.Document(id)
	if err != nil || d == nil {
		return Document{}, "", false
	}
	doc, version = fromStored(d)
	return doc, version, true
}

// newIndex wraps idx, checking its format and reading its name, position
// and digest.
func newIndex(idx bleve.Index, writable bool) (*Index, error) {
	f, err := idx.GetInternal(internalFormat)
	if err != nil {
		return nil, err
	}
	switch string(f) {
	case format:
	case "1":
		return nil, fmt.Errorf("index format %q was written by an older kretrieve and lacks document versions; rebuild it (format %q)", f, format)
	default:
		return nil, fmt.Errorf("not a kretrieve index (format %q, want %q)", f, format)
	}
	name, err := idx.GetInternal(internalName)
	if err != nil {
		return nil, err
	}
	ix := &Index{idx: idx, name: string(name), writable: writable}
	if ix.pos, ix.digest, err = readState(idx); err != nil {
		return nil, err
	}
	return ix, nil
}

// fill indexes docs in batches, then records name, format, cfg's position
// and the digest of docs.
func fill(ctx context.Context, idx bleve.Index, name string, docs []Document, cfg config) error {
	contexts := packageContexts(docs)
	var digest Digest
	b := idx.NewBatch()
	for i, d := range docs {
		version := d.Hash()
		digest.Add(d.ID, version)
		if err := b.Index(d.ID, bleveDoc(d, contexts[d.ImportPath], version)); err != nil {
			return fmt.Errorf("document %q: %w", d.ID, err)
		}
		if b.Size() < cfg.batchSize && i < len(docs)-1 {
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
	if err := setState(b, cfg.pos, digest); err != nil {
		return err
	}
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

// storedVersion returns the stored version of d, without rebuilding the
// rest of the document.
func storedVersion(d index.Document) (version string) {
	d.VisitFields(func(f index.Field) {
		if f.Name() == fieldVersion {
			version = string(f.Value())
		}
	})
	return version
}

// fromStored rebuilds a Document from its stored fields and returns it
// with its stored version.
func fromStored(d index.Document) (doc Document, version string) {
	doc.ID = d.ID()
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
		case fieldVersion:
			version = v
		default:
			if key, ok := strings.CutPrefix(name, fieldMetadata+"."); ok {
				if doc.Metadata == nil {
					doc.Metadata = make(map[string]string)
				}
				doc.Metadata[key] = v
			}
		}
	})
	return doc, version
}
