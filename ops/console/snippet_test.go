// SPDX-License-Identifier: Apache-2.0

package console

import (
	"reflect"
	"testing"
)

// TestPlainSnippet: an enrichment snippet (escaped HTML with marks) becomes
// text, unescaped, and the byte ranges of its marks.
func TestPlainSnippet(t *testing.T) {
	text, marks := plainSnippet(`a &lt;img src=x&gt; <mark>URL</mark> &amp; <mark>parse</mark>…`)
	if want := `a <img src=x> URL & parse…`; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	if want := [][2]int{{14, 17}, {20, 25}}; !reflect.DeepEqual(marks, want) {
		t.Errorf("marks %v, want %v", marks, want)
	}
	if text, marks := plainSnippet("no <mark>end"); text != "no <mark>end" || len(marks) != 0 {
		t.Errorf("unclosed mark: %q %v", text, marks)
	}
}
