// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// unquoteCases are JSON string literals, each valid, with every escape
// and every way a surrogate can come alone or paired.
var unquoteCases = []string{
	`""`, `"plain"`, `"é ü 漢字 😀"`,
	`"\u003cmark\u003ekafka\u003c/mark\u003e \u0026 co"`,
	`"\"quoted\" \\ back \/ slash"`, `"\b\f\n\r\t"`, `"tab\tin the middle\n"`,
	`"\u00e9\u00E9\u6f22"`, `"\ud83d\ude00"`, `"\uD83D\uDE00 pair, upper case"`,
	`"\ud83d lone high"`, `"\ude00 lone low"`, `"\ud83d\u0041 high then not low"`,
	`"\ud83d\ud83d\ude00 high, high, low"`, `"\ude00\ud83d reversed"`, `"\ud83d"`, `"end \ud83d\\"`,
	`"\ud83d\n"`, `"\u0000 nul"`, `"\\u0041 not an escape"`, `"\\"`,
}

// TestUnquoteMatchesEncodingJSON: unquote decodes each literal as
// encoding/json does.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, lit := range unquoteCases {
		checkUnquote(t, []byte(lit))
	}
}

// FuzzUnquote checks unquote against encoding/json on every valid UTF-8
// JSON string literal.
func FuzzUnquote(f *testing.F) {
	for _, lit := range unquoteCases {
		f.Add([]byte(lit))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' || !json.Valid(lit) || !utf8.Valid(lit) {
			return
		}
		checkUnquote(t, lit)
	})
}

func checkUnquote(t *testing.T, lit []byte) {
	t.Helper()
	var want string
	if err := json.Unmarshal(lit, &want); err != nil {
		t.Fatalf("%s: encoding/json: %v", lit, err)
	}
	got, ok := unquote(lit)
	if !ok || got != want {
		t.Errorf("unquote(%s) = %q, %v; encoding/json says %q", lit, got, ok, want)
	}
}

// BenchmarkUnquote decodes the literal of a result's snippet, its marks
// escaped as encoding/json writes them, with unquote and with
// encoding/json (what decoder.string did before for any literal with an
// escape).
func BenchmarkUnquote(b *testing.B) {
	snippet := `… how the group \u003cmark\u003erebalances\u003c/mark\u003e its \u003cmark\u003econsumers\u003c/mark\u003e: each member\u0026#39;s partitions are revoked, then the \u003cmark\u003econsumer\u003c/mark\u003e group leader assigns them again …`
	lit := []byte(`"` + snippet + `"`)
	b.Run("unquote", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := unquote(lit); !ok {
				b.Fatal("not unquoted")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var s string
			if err := json.Unmarshal(lit, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
