// SPDX-License-Identifier: Apache-2.0

package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 40) + "the gzip format is described here " + strings.Repeat("dolor sit ", 40)
	multi := strings.Repeat("ü", 100) + " İstanbul gzip " + strings.Repeat("ß", 100)
	tests := []struct {
		name          string
		body, query   string
		maxRunes      int
		contains      string
		prefix, suffx bool // "…" expected at the start, at the end
	}{
		{"match in the middle", long, "GZIP", 60, "gzip", true, true},
		{"no match", long, "absent", 60, "lorem ipsum", false, true},
		{"short body", "short body", "x", 60, "short body", false, false},
		{"multi-byte", multi, "gzip", 30, "gzip", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Snippet(tt.body, tt.query, tt.maxRunes)
			if !utf8.ValidString(s) || !strings.Contains(s, tt.contains) {
				t.Fatalf("snippet %q", s)
			}
			if strings.HasPrefix(s, "…") != tt.prefix || strings.HasSuffix(s, "…") != tt.suffx {
				t.Errorf("snippet %q: ellipses at start %v, end %v", s, tt.prefix, tt.suffx)
			}
			if n := utf8.RuneCountInString(s); n > tt.maxRunes+2 {
				t.Errorf("snippet has %d runes", n)
			}
		})
	}
}
