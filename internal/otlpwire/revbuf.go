// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"

	"google.golang.org/protobuf/encoding/protowire"
)

// revBuf is a byte buffer filled from its end towards its start. A
// length-delimited protobuf field is written contents first, so its length
// is known when its prefix is written: no size pass and no memmove. Fields
// must therefore be written in reverse order (highest field number first,
// repeated elements last to first) for the output to be in the usual order.
//
// The encoded bytes are b[off:]. The buffer is reused across exports; it
// grows by doubling and never shrinks.
type revBuf struct {
	b   []byte
	off int
}

// reset empties the buffer, keeping its memory.
func (w *revBuf) reset() { w.off = len(w.b) }

// len returns the number of bytes written so far. Use it as the mark passed
// to [revBuf.lenTag].
func (w *revBuf) len() int { return len(w.b) - w.off }

// bytes returns the encoded bytes. They are valid until the next write.
func (w *revBuf) bytes() []byte { return w.b[w.off:] }

// reserve makes room for n more bytes in front of the written ones.
func (w *revBuf) reserve(n int) {
	if w.off < n {
		w.grow(n)
	}
}

// grow is reserve's slow path.
func (w *revBuf) grow(n int) {
	used := len(w.b) - w.off
	size := max(2*len(w.b), used+n, 4096)
	nb := make([]byte, size)
	copy(nb[size-used:], w.b[w.off:])
	w.b, w.off = nb, size-used
}

func (w *revBuf) varint(v uint64) {
	w.reserve(maxVarint)
	w.putVarint(v)
}

func (w *revBuf) raw(s string) {
	w.reserve(len(s))
	w.off -= len(s)
	copy(w.b[w.off:], s)
}

func (w *revBuf) rawBytes(p []byte) {
	w.reserve(len(p))
	w.off -= len(p)
	copy(w.b[w.off:], p)
}

func (w *revBuf) tag(num protowire.Number, typ protowire.Type) {
	w.varint(protowire.EncodeTag(num, typ))
}

// lenTag finishes a length-delimited field numbered num whose contents are
// everything written since mark (a value of [revBuf.len]).
func (w *revBuf) lenTag(num protowire.Number, mark int) {
	w.varint(uint64(w.len() - mark))
	w.tag(num, protowire.BytesType)
}

// stringField writes a string field, or nothing when s is empty (proto3
// fields without presence are omitted at their zero value).
func (w *revBuf) stringField(num protowire.Number, s string) {
	if s == "" {
		return
	}
	w.stringAlways(num, s)
}

// stringAlways writes a string field even when s is empty, as a member of a
// oneof must be.
func (w *revBuf) stringAlways(num protowire.Number, s string) {
	w.raw(s)
	w.varint(uint64(len(s)))
	w.tag(num, protowire.BytesType)
}

func (w *revBuf) bytesAlways(num protowire.Number, p []byte) {
	w.rawBytes(p)
	w.varint(uint64(len(p)))
	w.tag(num, protowire.BytesType)
}

// varintField writes a varint field, or nothing when v is zero.
func (w *revBuf) varintField(num protowire.Number, v uint64) {
	if v == 0 {
		return
	}
	w.varintAlways(num, v)
}

func (w *revBuf) varintAlways(num protowire.Number, v uint64) {
	w.varint(v)
	w.tag(num, protowire.VarintType)
}

// fixed64Field writes a fixed64 field, or nothing when v is zero.
func (w *revBuf) fixed64Field(num protowire.Number, v uint64) {
	if v == 0 {
		return
	}
	w.fixed64Always(num, v)
}

func (w *revBuf) fixed64Always(num protowire.Number, v uint64) {
	w.reserve(8)
	w.off -= 8
	protowire.AppendFixed64(w.b[:w.off], v)
	w.tag(num, protowire.Fixed64Type)
}

// fixed32Field writes a fixed32 field, or nothing when v is zero.
func (w *revBuf) fixed32Field(num protowire.Number, v uint32) {
	if v == 0 {
		return
	}
	w.reserve(4)
	w.off -= 4
	protowire.AppendFixed32(w.b[:w.off], v)
	w.tag(num, protowire.Fixed32Type)
}

// The put* writers below do not check for room: the caller has reserved
// enough with [revBuf.reserve] (an upper bound: maxVarint per varint).
// They are small enough to be inlined, which matters on the hot path of
// scalar attributes.

// maxVarint is the largest size of a varint.
const maxVarint = 10

func (w *revBuf) putByte(c byte) {
	w.off--
	w.b[w.off] = c
}

// putVarint writes v; values below 0x80 (most tags and the lengths of
// small messages) take the inlined fast path.
func (w *revBuf) putVarint(v uint64) {
	if v < 0x80 {
		w.off--
		w.b[w.off] = byte(v)
		return
	}
	w.putLongVarint(v)
}

func (w *revBuf) putLongVarint(v uint64) {
	w.off -= protowire.SizeVarint(v)
	protowire.AppendVarint(w.b[:w.off], v) // writes b[off:off+n] in place
}

func (w *revBuf) putString(s string) {
	w.off -= len(s)
	copy(w.b[w.off:], s)
}

func (w *revBuf) putBytes(p []byte) {
	w.off -= len(p)
	copy(w.b[w.off:], p)
}

func (w *revBuf) putFixed64(v uint64) {
	w.off -= 8
	binary.LittleEndian.PutUint64(w.b[w.off:], v)
}
