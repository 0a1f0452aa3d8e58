// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are JSON texts, valid and not, around each rule of the
// grammar.
var validCases = []string{
	``, ` `, `{}`, `[]`, ` { } `, `[ ]`, `{"a":1}`, `{"a" : [1, 2.5, -0, 1e3, 1E+3, -1.5e-3, true, false, null, "s"]}`,
	`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1}{}`, `{"a":1} x`, `[1 2]`,
	`01`, `-`, `-0`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `1.5e3.2`, `00`, `-01`, `2.`, `NaN`, `Infinity`,
	`"`, `"abc`, `"a\"b"`, `"\u00e9\ud83d\ude00"`, `"\u12"`, `"\u12g4"`, `"\x"`, `"\'"`, "\"tab\there\"", "\"nl\nhere\"",
	"\"\x7f del\"", "\"\xff not utf-8\"", `"\/\b\f\n\r\t\\"`, `tru`, `true`, `truex`, `nul`, `null`, `falsey`,
	"[1,\n2,\r\n3,\t4]", `{"nested":{"deep":[[[{"x":[]}]]]}}`, `[[[`, `]`, `}`, `{"a":1]`, `[1}`,
}

// TestValidJSONMatchesEncodingJSON: validJSON agrees with json.Valid on
// each case, and on nesting at and past encoding/json's limit.
func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	cases := append([]string{}, validCases...)
	for _, depth := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		cases = append(cases, strings.Repeat("[", depth)+strings.Repeat("]", depth),
			strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth))
	}
	for _, c := range cases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

// FuzzValidJSON checks validJSON against json.Valid on any input.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON checks a result payload with validJSON and with
// json.Valid (what decodeObject called before).
func BenchmarkValidJSON(b *testing.B) {
	body := []byte(`{"schema_version":2,"request_id":"01JDQ3Z7W8X2K4M6N8P0R2T4V6","documents":[`)
	for i := range 10 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `{"id":"net/http.Client","title":"Client","score":7.25,"snippet":"… a \u003cmark\u003eClient\u003c/mark\u003e is an HTTP \u003cmark\u003eclient\u003c/mark\u003e. Its zero value (DefaultClient) is a usable client that uses DefaultTransport …","url":"https://pkg.go.dev/net/http#Client","source":"stdlib","kind":"type","import_path":"net/http","version":"6f1ed002ab5595859014ebf0951522d9"}`...)
	}
	body = append(body, `],"timings":{"stages":[{"stage":"retrieval","queue_ms":0.4,"work_ms":0.6},{"stage":"enrichment","queue_ms":0.3,"work_ms":0.5}]}}`...)
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !validJSON(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !json.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
}
