// SPDX-License-Identifier: Apache-2.0

package messages

import "strconv"

// MaxVersionBytes is the longest document version in a payload, in bytes.
// A version is opaque to readers; kretrieve writes search.Document.Hash,
// 32 lowercase hex digits.
const MaxVersionBytes = 64

var reasonVersion = "must be at most " + strconv.Itoa(MaxVersionBytes) + " ASCII letters, digits, '.', '_' or '-'"

// checkVersion applies the rules of a document version: empty (unknown),
// or up to MaxVersionBytes ASCII letters, digits, '.', '_' or '-'.
func checkVersion(v string) string {
	if len(v) > MaxVersionBytes {
		return reasonVersion
	}
	for i := 0; i < len(v); i++ {
		if !legalTopicByte(v[i]) {
			return reasonVersion
		}
	}
	return ""
}

// reasonStaleNeedsVersion is the reason of a stale_score without the
// version it is relative to.
const reasonStaleNeedsVersion = "required when stale_score is true"
