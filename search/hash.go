// SPDX-License-Identifier: Apache-2.0

package search

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
)

// Hash returns d's content hash, its version: the first 128 bits of the
// SHA-256 of its JSON encoding (fields in declaration order, metadata
// keys sorted), in hex. Equal documents have equal hashes whatever the
// order of their metadata.
func (d Document) Hash() string {
	// A Document holds only strings (invalid UTF-8 is replaced, not
	// refused): Marshal cannot fail.
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// Digest summarises a set of documents, each an (id, version) pair, so
// that two sets can be compared by their digests: equal sets have equal
// digests whatever the order the documents were added in, and a change
// to one document changes the digest. It is the sum, lane by lane modulo
// 2^64, of the SHA-256 of each pair (a multiset hash), so a document can
// be removed as cheaply as it was added. The zero Digest is the empty set.
type Digest struct {
	// Sum holds the two 64-bit lanes.
	Sum [2]uint64
	// Count is the number of documents in the set.
	Count int64
}

// pairHash returns the two lanes of the SHA-256 of (id, version).
func pairHash(id, version string) (uint64, uint64) {
	h := sha256.New()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(id)))
	h.Write(n[:])
	h.Write([]byte(id))
	h.Write([]byte(version))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])
}

// Add adds the document id at version to the set.
func (d *Digest) Add(id, version string) {
	a, b := pairHash(id, version)
	d.Sum[0] += a
	d.Sum[1] += b
	d.Count++
}

// Remove removes the document id at version, added before, from the set.
func (d *Digest) Remove(id, version string) {
	a, b := pairHash(id, version)
	d.Sum[0] -= a
	d.Sum[1] -= b
	d.Count--
}

// String returns the digest as 32 hex digits, then the count:
// "3f2a…9c/8352".
func (d Digest) String() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], d.Sum[0])
	binary.BigEndian.PutUint64(b[8:], d.Sum[1])
	return hex.EncodeToString(b[:]) + "/" + strconv.FormatInt(d.Count, 10)
}
