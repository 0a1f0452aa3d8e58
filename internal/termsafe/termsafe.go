// SPDX-License-Identifier: Apache-2.0

// Package termsafe makes text that comes from outside (span names, Kafka
// headers, records) safe to print on a terminal: a control or format
// character (an escape sequence, a bidirectional override) would otherwise
// act on the terminal instead of being shown. It is the one rule for what
// is unsafe: validators refuse what Unsafe reports, printers Escape it.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r must not reach a terminal raw: a control
// character (Unicode category Cc, such as ESC, CR, BEL), a format character
// (Cf, such as the bidirectional overrides U+202E and U+2066) or
// utf8.RuneError (what invalid UTF-8 decodes to).
func Unsafe(r rune) bool {
	return r == utf8.RuneError || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

// Escape returns s with every unsafe character written as its Go escape
// (\x1b, \a, \u202e) and every byte of invalid UTF-8 as \xNN; s itself
// when it has none.
func Escape(s string) string {
	i := strings.IndexFunc(s, Unsafe)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case Unsafe(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
