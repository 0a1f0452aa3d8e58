// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"crypto/rand"
	"strings"
	"time"
)

// crockford is the Crockford base32 alphabet used by ULIDs.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewRequestID returns a new random request id: a 26-character ULID
// (Crockford base32 of a 48-bit millisecond timestamp and 80 random bits
// from crypto/rand). Ids are URL-safe and sort by creation time to the
// millisecond.
func NewRequestID() string {
	var id [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		id[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(id[6:]) // never fails: see crypto/rand.Read
	return encodeULID(id)
}

// encodeULID writes the 128 bits of id, preceded by two zero bits, as 26
// base32 characters.
func encodeULID(id [16]byte) string {
	var dst [26]byte
	for i := range dst {
		var v byte
		for j := 0; j < 5; j++ {
			v <<= 1
			if bit := i*5 + j - 2; bit >= 0 && id[bit/8]&(0x80>>(bit%8)) != 0 {
				v |= 1
			}
		}
		dst[i] = crockford[v]
	}
	return string(dst[:])
}

// IsGeneratedRequestID reports whether id has the form of the ids
// NewRequestID makes (26 characters of Crockford base32, the first 0–7).
// Such ids carry no user data; any other id was chosen by a producer, or
// adopted from a record key, and may.
func IsGeneratedRequestID(id string) bool {
	if len(id) != 26 || id[0] < '0' || id[0] > '7' {
		return false
	}
	for i := range len(id) {
		if strings.IndexByte(crockford, id[i]) < 0 {
			return false
		}
	}
	return true
}
