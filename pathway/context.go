// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"encoding/binary"
	"errors"
	"time"
)

// HeaderKey is the record header that carries the pathway context.
const HeaderKey = "kretrieve-pathway"

// Size is the length of an encoded pathway context.
const Size = 25

// version is the first byte of the encoding.
const version = 1

// Plausibility bounds of the times in a header. A record may sit in Kafka
// for as long as the topic retains it, but not for MaxAge; clocks disagree,
// but not by MaxSkew.
const (
	// MaxAge is how far in the past an origin may lie.
	MaxAge = 30 * 24 * time.Hour
	// MaxSkew is how far in the future a time may lie.
	MaxSkew = time.Minute
)

// Errors of Decode. Each means the header is ignored.
var (
	ErrLength  = errors.New("pathway: wrong length")
	ErrVersion = errors.New("pathway: unknown version")
	ErrHash    = errors.New("pathway: zero hash")
	ErrTime    = errors.New("pathway: implausible time")
)

// Context is a record's pathway context.
type Context struct {
	// Hash identifies the pathway up to and including the checkpoint that
	// wrote the header.
	Hash uint64
	// Origin is when the pathway's first checkpoint saw the request, in
	// Unix nanoseconds.
	Origin int64
	// Prev is when the previous checkpoint (the one that wrote the
	// header) saw the record, in Unix nanoseconds.
	Prev int64
}

// IsValid reports whether c is a pathway context (not the zero Context).
func (c Context) IsValid() bool { return c.Hash != 0 && c.Origin > 0 }

// Append appends the encoding of c to b.
func (c Context) Append(b []byte) []byte {
	b = append(b, version)
	b = binary.BigEndian.AppendUint64(b, c.Hash)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Origin))
	return binary.BigEndian.AppendUint64(b, uint64(c.Prev))
}

// Encode writes the encoding of c into dst, which must hold Size bytes.
func (c Context) Encode(dst *[Size]byte) {
	dst[0] = version
	binary.BigEndian.PutUint64(dst[1:9], c.Hash)
	binary.BigEndian.PutUint64(dst[9:17], uint64(c.Origin))
	binary.BigEndian.PutUint64(dst[17:25], uint64(c.Prev))
}

// Decode parses an encoded pathway context read at now (Unix
// nanoseconds). It refuses anything but exactly Size bytes of this
// version with a non-zero hash, an origin within MaxAge before now, and a
// previous checkpoint time not before the origin and at most MaxSkew after
// now. It never allocates.
func Decode(b []byte, now int64) (Context, error) {
	if len(b) != Size {
		return Context{}, ErrLength
	}
	if b[0] != version {
		return Context{}, ErrVersion
	}
	c := Context{
		Hash:   binary.BigEndian.Uint64(b[1:9]),
		Origin: int64(binary.BigEndian.Uint64(b[9:17])),
		Prev:   int64(binary.BigEndian.Uint64(b[17:25])),
	}
	if c.Hash == 0 {
		return Context{}, ErrHash
	}
	if c.Origin <= 0 || c.Origin < now-int64(MaxAge) || c.Prev < c.Origin || c.Prev > now+int64(MaxSkew) {
		return Context{}, ErrTime
	}
	return c, nil
}
