// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"encoding/binary"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// Direction says whether a checkpoint reads a topic or writes one, or
// ends a record's pathway because its deadline passed.
type Direction uint8

// Directions.
const (
	// In is a consumer starting to process a record of the topic.
	In Direction = iota + 1
	// Out is a producer handing a record to the topic.
	Out
	// Expired is a consumer that took a record of the topic after the
	// deadline its producer set, and did not do its work: a terminal
	// checkpoint, as a result or a dead letter is.
	Expired
)

// String returns "in", "out" or "expired".
func (d Direction) String() string {
	switch d {
	case In:
		return "in"
	case Out:
		return "out"
	case Expired:
		return "expired"
	}
	return "direction(" + strconv.Itoa(int(d)) + ")"
}

// Checkpoint is the identity of a place records pass: who (service and
// consumer group), which topic, which way.
type Checkpoint struct {
	// Service is the service.name of the process.
	Service string
	// Group is the consumer group, "" for producers and direct consumers.
	Group string
	// Topic is the topic read or written.
	Topic string
	// Direction is In or Out.
	Direction Direction
}

// ID returns the checkpoint's identity hash, the value Chain mixes in.
func (c Checkpoint) ID() uint64 {
	d := xxhash.New()
	for _, s := range []string{c.Service, c.Group, c.Topic} {
		_, _ = d.WriteString(s)
		_, _ = d.Write([]byte{0})
	}
	_, _ = d.Write([]byte{byte(c.Direction)})
	return d.Sum64()
}

// Edge returns the checkpoint as an edge of the pipeline graph:
// "topic → group" for a consumer group reading (or "topic → service"
// without a group), "group → topic" for a producer writing (or
// "service → topic"), "topic → group (expired)" for records a consumer
// took past their deadline.
func (c Checkpoint) Edge() string {
	who := c.Group
	if who == "" {
		who = c.Service
	}
	switch c.Direction {
	case In:
		return c.Topic + " → " + who
	case Expired:
		return c.Topic + " → " + who + " (expired)"
	}
	return who + " → " + c.Topic
}

// Chain returns the hash of a checkpoint with identity id whose parent
// pathway hash is parent (0 for a pathway's first checkpoint). It is never
// 0.
func Chain(parent, id uint64) uint64 {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], parent)
	binary.BigEndian.PutUint64(b[8:], id)
	h := xxhash.Sum64(b[:])
	if h == 0 {
		h = 1
	}
	return h
}

// Next returns the pathway context a checkpoint with identity id writes
// (or reads into) at now, Unix nanoseconds: the chained hash, the parent's
// origin, and now as the previous-checkpoint time for the next one. A
// parent that is not valid starts a new pathway with origin now.
func Next(parent Context, id uint64, now int64) Context {
	if !parent.IsValid() {
		return Context{Hash: Chain(0, id), Origin: now, Prev: now}
	}
	return Context{Hash: Chain(parent.Hash, id), Origin: parent.Origin, Prev: now}
}

// HashString formats a pathway hash as 16 hexadecimal digits.
func HashString(h uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[h&0xf]
		h >>= 4
	}
	return string(b[:])
}
