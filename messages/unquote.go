// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// unquote returns the string the JSON string literal s (quotes included)
// holds, as encoding/json decodes it: escapes resolved, a UTF-16
// surrogate that is not part of a pair as U+FFFD. s must come from a value
// json.Valid accepted and be valid UTF-8 (decoder.string checks both);
// unquote reports false for what such a literal never holds, so that the
// caller can fall back to encoding/json. Result payloads carry snippets
// whose marks encoding/json escapes ("\u003cmark\u003e"): this is their
// decoding without encoding/json's second validation pass and reflection.
func unquote(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	s = s[1 : len(s)-1]
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return string(s), true
	}
	b := make([]byte, 0, len(s))
	for {
		b = append(b, s[:i]...)
		s = s[i:]
		if len(s) < 2 {
			return "", false
		}
		switch c := s[1]; c {
		case '"', '\\', '/':
			b, s = append(b, c), s[2:]
		case 'b':
			b, s = append(b, '\b'), s[2:]
		case 'f':
			b, s = append(b, '\f'), s[2:]
		case 'n':
			b, s = append(b, '\n'), s[2:]
		case 'r':
			b, s = append(b, '\r'), s[2:]
		case 't':
			b, s = append(b, '\t'), s[2:]
		case 'u':
			r := hex4(s[2:])
			if r < 0 {
				return "", false
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				next := rune(-1)
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					next = hex4(s[2:])
				}
				if pair := utf16.DecodeRune(r, next); pair != unicode.ReplacementChar {
					b, s = utf8.AppendRune(b, pair), s[6:]
					break
				}
				r = unicode.ReplacementChar
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
		if i = bytes.IndexByte(s, '\\'); i < 0 {
			return string(append(b, s...)), true
		}
	}
}

// hex4 returns the value of the four hexadecimal digits s starts with, or
// -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
