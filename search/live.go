// SPDX-License-Identifier: Apache-2.0

package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"
)

// Position is where an index stands in the documents topic: the topic and,
// per partition, the next offset to apply (every record before it is applied).
type Position struct {
	// Topic is the documents topic's name; empty in the zero Position.
	Topic string
	// Offsets maps each partition to the offset of the first record not
	// yet applied.
	Offsets map[int32]int64
	// Newest is the timestamp of the newest record applied, the age of
	// the index's content; zero when unknown. It is kept with the offsets,
	// so that a reopened index, and a search that finds a document, never
	// see a Newest older than the documents they hold.
	Newest time.Time
}

// clone returns a copy of p that shares no map with it.
func (p Position) clone() Position {
	return Position{Topic: p.Topic, Offsets: maps.Clone(p.Offsets), Newest: p.Newest}
}

// equal reports whether p and q name the same topic, offsets and newest
// record.
func (p Position) equal(q Position) bool {
	return p.Topic == q.Topic && maps.Equal(p.Offsets, q.Offsets) && p.Newest.Equal(q.Newest)
}

// check refuses negative partitions and offsets, and offsets without a
// topic.
func (p Position) check() error {
	if p.Topic == "" && len(p.Offsets) > 0 {
		return errors.New("position: offsets without a topic")
	}
	for part, off := range p.Offsets {
		if part < 0 || off < 0 {
			return fmt.Errorf("position: partition %d at offset %d: negative", part, off)
		}
	}
	return nil
}

// Change is one document change: an upsert (Doc != nil) or a delete of ID.
type Change struct {
	// ID is the document's id; it must not be empty and, for an upsert,
	// must equal Doc.ID.
	ID string
	// Doc is the document's new content, or nil to delete ID.
	Doc *Document
}

// Applied counts what one Apply did: each change counts once, against the
// state the changes before it left. Upserted+Deleted+Unchanged is the
// number of changes.
type Applied struct {
	// Upserted counts upserts of a new document or of a new version.
	Upserted int
	// Deleted counts deletes of a document the index held.
	Deleted int
	// Unchanged counts changes that changed nothing: an upsert of the
	// version already held, a delete of an absent id.
	Unchanged int
}

// Apply applies changes to the index, in the order given, and records pos
// as the index's Position. A later change of an id wins over an earlier
// one, so an upsert then a delete of the same id deletes it. An upsert of
// the version the index holds (Document.Hash) is not re-indexed; deleting
// an absent id does nothing.
//
// Apply is atomic: one bleve batch holds the documents, pos and the new
// Digest, so searches, and an index reopened after a crash, see all of it or
// none. Searches run concurrently; Apply calls are serialised. Changing a
// package document (Kind "package", ID = its ImportPath) re-indexes the
// other documents of that import path with its new context, so the index
// searches as one built by NewMemory from the same final documents would.
//
// Every change must have a non-empty ID equal to its Doc's ID, and pos
// non-negative offsets under a topic; otherwise Apply changes nothing and
// returns an error. An index opened with Open is read-only: Apply fails.
func (ix *Index) Apply(ctx context.Context, changes []Change, pos Position) (Applied, error) {
	if !ix.writable {
		return Applied{}, fmt.Errorf("apply: index %q is open read-only (open it with OpenWritable)", ix.name)
	}
	if err := checkChanges(changes); err != nil {
		return Applied{}, fmt.Errorf("apply: %w", err)
	}
	if err := pos.check(); err != nil {
		return Applied{}, fmt.Errorf("apply: %w", err)
	}
	ix.applyMu.Lock()
	defer ix.applyMu.Unlock()
	b, applied, digest, err := ix.plan(ctx, changes)
	if err != nil {
		return Applied{}, fmt.Errorf("apply: %w", err)
	}
	if b.Size() == 0 && pos.equal(ix.Position()) {
		return applied, nil
	}
	if err := setState(b, pos, digest); err != nil {
		return Applied{}, fmt.Errorf("apply: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Applied{}, fmt.Errorf("apply: %w", err)
	}
	// Once the batch is searchable (or may be, if it failed), the versions
	// read before it are forgotten.
	defer ix.versions.invalidate()
	if err := ix.idx.Batch(b); err != nil {
		// The batch may be searchable and not on disk: Position and
		// Digest say what the index itself now holds.
		return Applied{}, fmt.Errorf("apply: %w", err)
	}
	return applied, nil
}

// plan turns changes into a batch of document operations (without the
// position) against a snapshot of the index, and returns it with the
// counts and the digest the index will have once the batch is applied.
func (ix *Index) plan(ctx context.Context, changes []Change) (*bleve.Batch, Applied, Digest, error) {
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, Applied{}, Digest{}, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, Applied{}, Digest{}, err
	}
	defer func() { _ = r.Close() }()
	p := &applyPlan{
		ctx:      ctx,
		r:        r,
		stored:   make(map[string]*entry),
		pending:  make(map[string]*entry),
		indexed:  make(map[string]bool),
		contexts: make(map[string]string),
	}
	applied, err := p.resolve(changes)
	if err != nil {
		return nil, Applied{}, Digest{}, err
	}
	b := ix.idx.NewBatch()
	digest := ix.Digest()
	if err := p.write(b, &digest); err != nil {
		return nil, Applied{}, Digest{}, err
	}
	if err := p.reindexMembers(b); err != nil {
		return nil, Applied{}, Digest{}, err
	}
	return b, applied, digest, nil
}

// checkChanges refuses empty ids and upserts whose document has another id.
func checkChanges(changes []Change) error {
	for i, c := range changes {
		if c.ID == "" {
			return fmt.Errorf("change %d: empty id", i)
		}
		if c.Doc != nil && c.Doc.ID != c.ID {
			return fmt.Errorf("change %d: id %q but document id %q", i, c.ID, c.Doc.ID)
		}
	}
	return nil
}

// Position returns a copy of the index's position in the documents topic:
// the one the last Apply recorded, or WithPosition gave Build or NewMemory.
// It is the zero Position when the index was never stamped. It is never
// behind the documents a search run before the call could find (see state).
func (ix *Index) Position() Position {
	p, _ := ix.state()
	return p
}

// Digest returns the digest of the (id, version) pairs of the documents the
// index holds, as Digest.Add of each would make it.
func (ix *Index) Digest() Digest {
	_, d := ix.state()
	return d
}

// state returns the position and digest that the index's current snapshot
// holds, those of the last batch that searches can see. They are read
// from the snapshot rather than kept when Batch returns, because bleve
// makes a batch searchable before Batch returns: Batch then waits for the
// batch to be persisted, and a position kept only then would lag, by that
// wait, the documents a search finds. The decoded values are cached by
// their stored bytes; if the snapshot cannot be read, state returns the
// cached ones.
func (ix *Index) state() (Position, Digest) {
	ix.stateMu.Lock()
	defer ix.stateMu.Unlock()
	_ = ix.readRawState(func(p, d []byte) {
		if p == nil || d == nil || bytes.Equal(p, ix.rawPos) && bytes.Equal(d, ix.rawDigest) {
			return
		}
		if pos, digest, err := decodeState(p, d); err == nil {
			ix.pos, ix.digest, ix.rawPos, ix.rawDigest = pos, digest, slices.Clone(p), slices.Clone(d)
		}
	})
	return ix.pos.clone(), ix.digest
}

// readRawState calls fn with the stored position and digest of one
// snapshot of the index, valid only during the call.
func (ix *Index) readRawState(fn func(pos, digest []byte)) error {
	adv, err := ix.idx.Advanced()
	if err != nil {
		return err
	}
	r, err := adv.Reader()
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	pos, err := r.GetInternal(internalPosition)
	if err != nil {
		return err
	}
	digest, err := r.GetInternal(internalDigest)
	if err != nil {
		return err
	}
	fn(pos, digest)
	return nil
}

// Version returns the version (Document.Hash) of the stored document id. It
// reports false if there is no such document or it could not be read. The
// versions read are kept until the next Apply (see versionCache).
func (ix *Index) Version(id string) (string, bool) {
	if id == "" {
		return "", false
	}
	version, gen, ok := ix.versions.get(id)
	if ok {
		return version, true
	}
	d, err := ix.idx.Document(id)
	if err != nil || d == nil {
		return "", false
	}
	version = storedVersion(d)
	ix.versions.put(id, version, gen)
	return version, true
}

// positionJSON and digestJSON are how Position and Digest are kept in the
// index's internal storage.
type (
	positionJSON struct {
		Topic   string          `json:"topic,omitempty"`
		Offsets map[int32]int64 `json:"offsets,omitempty"`
		Newest  time.Time       `json:"newest,omitzero"`
	}
	digestJSON struct {
		Sum   [2]uint64 `json:"sum"`
		Count int64     `json:"count"`
	}
)

// setState adds pos and digest to b's internal storage.
func setState(b *bleve.Batch, pos Position, digest Digest) error {
	p, err := json.Marshal(positionJSON(pos))
	if err != nil {
		return err
	}
	d, err := json.Marshal(digestJSON(digest))
	if err != nil {
		return err
	}
	b.SetInternal(internalPosition, p)
	b.SetInternal(internalDigest, d)
	return nil
}

// readState reads the position and digest in idx's internal storage.
func readState(idx bleve.Index) (Position, Digest, error) {
	p, err := idx.GetInternal(internalPosition)
	if err != nil {
		return Position{}, Digest{}, err
	}
	d, err := idx.GetInternal(internalDigest)
	if err != nil {
		return Position{}, Digest{}, err
	}
	return decodeState(p, d)
}

// decodeState decodes a stored position and digest.
func decodeState(pos, digest []byte) (Position, Digest, error) {
	var (
		p positionJSON
		d digestJSON
	)
	for _, v := range []struct {
		key, val []byte
		to       any
	}{{internalPosition, pos, &p}, {internalDigest, digest, &d}} {
		if v.val == nil {
			return Position{}, Digest{}, fmt.Errorf("no %s in the index", v.key)
		}
		if err := json.Unmarshal(v.val, v.to); err != nil {
			return Position{}, Digest{}, fmt.Errorf("%s: %w", v.key, err)
		}
	}
	return Position(p), Digest(d), nil
}

// entry is a document with its version.
type entry struct {
	doc     Document
	version string
}

// applyPlan works out one Apply's batch against a snapshot of the index.
type applyPlan struct {
	ctx context.Context
	r   index.IndexReader
	// order lists the ids changed, in the order of their first change.
	order []string
	// stored caches the snapshot's documents (nil: absent).
	stored map[string]*entry
	// pending holds each changed id's state after the changes (nil:
	// deleted).
	pending map[string]*entry
	// indexed marks the ids the batch indexes or deletes.
	indexed map[string]bool
	// contexts caches the package context of an import path after Apply.
	contexts map[string]string
}

// load returns the snapshot's document id, or nil if it has none.
func (p *applyPlan) load(id string) (*entry, error) {
	if e, ok := p.stored[id]; ok {
		return e, nil
	}
	d, err := p.r.Document(id)
	if err != nil {
		return nil, fmt.Errorf("document %q: %w", id, err)
	}
	var e *entry
	if d != nil {
		doc, version := fromStored(d)
		e = &entry{doc: doc, version: version}
	}
	p.stored[id] = e
	return e, nil
}

// resolve applies changes, in order, to pending, and counts them.
func (p *applyPlan) resolve(changes []Change) (Applied, error) {
	var a Applied
	for _, c := range changes {
		cur, seen := p.pending[c.ID]
		if !seen {
			var err error
			if cur, err = p.load(c.ID); err != nil {
				return Applied{}, err
			}
			p.order = append(p.order, c.ID)
		}
		var next *entry
		switch {
		case c.Doc == nil && cur == nil:
			a.Unchanged++
		case c.Doc == nil:
			a.Deleted++
		default:
			next = &entry{doc: *c.Doc, version: c.Doc.Hash()}
			if cur != nil && cur.version == next.version {
				a.Unchanged++
			} else {
				a.Upserted++
			}
		}
		p.pending[c.ID] = next
	}
	return a, nil
}

// write adds to b each changed id whose final state differs from the
// snapshot's, and keeps digest with it.
func (p *applyPlan) write(b *bleve.Batch, digest *Digest) error {
	for _, id := range p.order {
		old, next := p.stored[id], p.pending[id]
		switch {
		case next == nil && old == nil:
			continue
		case next == nil:
			b.Delete(id)
			digest.Remove(id, old.version)
		case old != nil && old.version == next.version:
			continue
		default:
			pc, err := p.context(next.doc.ImportPath)
			if err != nil {
				return err
			}
			if err := b.Index(id, bleveDoc(next.doc, pc, next.version)); err != nil {
				return fmt.Errorf("document %q: %w", id, err)
			}
			if old != nil {
				digest.Remove(id, old.version)
			}
			digest.Add(id, next.version)
		}
		p.indexed[id] = true
	}
	return nil
}

// context returns the package context of import path ip after the
// changes: from its package document among the changes, else in the index.
func (p *applyPlan) context(ip string) (string, error) {
	if ip == "" {
		return "", nil
	}
	if c, ok := p.contexts[ip]; ok {
		return c, nil
	}
	e, changed := p.pending[ip]
	if !changed {
		var err error
		if e, err = p.load(ip); err != nil {
			return "", err
		}
	}
	c := ""
	if e != nil && isPackageDoc(e.doc) {
		c = packageContext(e.doc)
	}
	p.contexts[ip] = c
	return c, nil
}

// reindexMembers adds to b, with their new context, the documents of each
// import path whose package context the changes changed, except those b
// already indexes or deletes.
func (p *applyPlan) reindexMembers(b *bleve.Batch) error {
	for _, ip := range p.order {
		before := ""
		if old := p.stored[ip]; old != nil && isPackageDoc(old.doc) {
			before = packageContext(old.doc)
		}
		after, err := p.context(ip)
		if err != nil {
			return err
		}
		if before == after {
			continue
		}
		if err := p.ctx.Err(); err != nil {
			return err
		}
		members, err := p.members(ip)
		if err != nil {
			return fmt.Errorf("documents of %q: %w", ip, err)
		}
		for _, id := range members {
			if id == ip || p.indexed[id] {
				continue
			}
			e, err := p.load(id)
			if err != nil {
				return err
			}
			if e == nil {
				continue
			}
			if err := b.Index(id, bleveDoc(e.doc, after, e.version)); err != nil {
				return fmt.Errorf("document %q: %w", id, err)
			}
			p.indexed[id] = true
		}
	}
	return nil
}

// members returns the ids of the snapshot's documents with import path ip.
func (p *applyPlan) members(ip string) ([]string, error) {
	tfr, err := p.r.TermFieldReader(p.ctx, []byte(ip), fieldImportPath, false, false, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tfr.Close() }()
	var ids []string
	for {
		d, err := tfr.Next(nil)
		if err != nil {
			return nil, err
		}
		if d == nil {
			return ids, nil
		}
		id, err := p.r.ExternalID(d.ID)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
}
