// SPDX-License-Identifier: Apache-2.0

package termsafe_test

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/termsafe"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain name é ☃":     "plain name é ☃",
		"\x1b[31mred\x1b[0m": `\x1b[31mred\x1b[0m`,
		"title\x1b]0;x\x07":  `title\x1b]0;x\a`,
		"cr\rlf\n":           `cr\rlf\n`,
		"bidi\u202eoff":      `bidi\u202eoff`,
		"isolate\u2066":      `isolate\u2066`,
		"bad \xff utf8":      `bad \xff utf8`,
		"c1 \u009b":          `c1 \u009b`,
		"":                   "",
	} {
		if got := termsafe.Escape(in); got != want {
			t.Errorf("Escape(%+q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnsafe(t *testing.T) {
	for _, r := range []rune{0, '\x1b', '\n', 0x7f, 0x9b, 0x200e, 0x202e, 0x2066, 0xfeff, 0xfffd} {
		if !termsafe.Unsafe(r) {
			t.Errorf("%U is safe", r)
		}
	}
	for _, r := range []rune{' ', 'a', 'é', '☃', '…'} {
		if termsafe.Unsafe(r) {
			t.Errorf("%U is unsafe", r)
		}
	}
}
