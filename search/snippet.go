// SPDX-License-Identifier: Apache-2.0

package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet returns up to maxRunes runes of body around the first occurrence of
// a query term, with "…" where text was cut. Without a match it returns the
// start of body. The result is plain text: nothing is marked or escaped. It
// needs no index; Highlight falls back to it, HTML-escaped, for documents
// whose body does not match the query.
func Snippet(body, query string, maxRunes int) string {
	if utf8.RuneCountInString(body) <= maxRunes {
		return body
	}
	lower := strings.ToLower(body)
	at := -1
	for _, t := range tokenize(query) {
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	// Start a little before the match, on a rune boundary.
	start := 0
	if at > 0 && at < len(body) {
		// Lower-casing can change byte lengths: realign on a rune boundary.
		start = at
		for start > 0 && !utf8.RuneStart(body[start]) {
			start--
		}
		for back := maxRunes / 4; back > 0 && start > 0; back-- {
			_, size := utf8.DecodeLastRuneInString(body[:start])
			start -= size
		}
	}
	end, n := start, 0
	for end < len(body) && n < maxRunes {
		_, size := utf8.DecodeRuneInString(body[end:])
		end += size
		n++
	}
	out := body[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(body) {
		out += "…"
	}
	return out
}

// tokenize lower-cases s and splits it into letter/digit runs.
func tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
