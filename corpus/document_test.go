// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

func TestParseDocument(t *testing.T) {
	big := `{"id":"big","body":"` + strings.Repeat("b", messages.MaxDocumentBytes-len(`{"id":"big","body":""}`)) + `"}`
	tests := []struct {
		name  string
		value string
		want  search.Document
		err   error
		// inErr is a part of the error message.
		inErr string
	}{
		{name: "minimal", value: `{"id":"a","title":"A"}`, want: search.Document{ID: "a", Title: "A", Source: JSONLSource}},
		{
			name:  "every field",
			value: `{"id":"net/url.Parse","title":"net/url.Parse","body":"Parse parses.","kind":"func","import_path":"net/url","url":"https://pkg.go.dev/net/url#Parse","source":"go-stdlib","metadata":{"rank":3}}`,
			want: search.Document{ID: "net/url.Parse", Title: "net/url.Parse", Body: "Parse parses.", Kind: "func", ImportPath: "net/url",
				URL: "https://pkg.go.dev/net/url#Parse", Source: "go-stdlib", Metadata: map[string]string{"rank": "3"}},
		},
		{name: "at the size limit", value: big, want: search.Document{ID: "big", Body: big[len(`{"id":"big","body":"`) : len(big)-2], Source: JSONLSource}},
		{name: "one byte over the size limit", value: big[:len(big)-1] + ` }`, err: errTooLarge, inErr: "limit 1024000"},
		{name: "invalid UTF-8", value: `{"id":"a","title":"caf` + "\xe9" + `"}`, err: errInvalidUTF8},
		{name: "invalid JSON", value: `{"id":"a"`, err: errInvalidJSON},
		{name: "not an object", value: `[1]`, err: errInvalidJSON},
		{name: "null", value: `null`, err: errMissingID},
		{name: "blank id", value: `{"id":" ","title":"A"}`, err: errMissingID},
		{name: "id too long", value: `{"id":"` + strings.Repeat("i", MaxIDBytes+1) + `","title":"A"}`, err: errIDTooLong},
		{name: "empty document", value: `{"id":"e","title":" "}`, err: errEmptyDocument, inErr: `document "e": title and body`},
		{name: "nested metadata", value: `{"id":"n","title":"N","metadata":{"k":[1]}}`, err: errNestedMetadata},
		{name: "bad URL", value: `{"id":"u","title":"U","url":"javascript:alert(1)"}`, err: errBadURL},
		{name: "markup", value: `{"id":"m","title":"<script>x</script>"}`, err: errMarkup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDocument([]byte(tt.value))
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.inErr) {
					t.Fatalf("err = %.200v, want %v containing %q", err, tt.err, tt.inErr)
				}
				if !reflect.DeepEqual(got, search.Document{}) {
					t.Errorf("a document with the error: %+v", got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %.200v, %v; want %.200v", got, err, tt.want)
			}
		})
	}
}

// TestParseDocumentIsReadJSONLsLine: on one line, ParseDocument and
// ReadJSONL reach the same verdict with the same reason and document
// (ReadJSONL is ParseDocument per line, plus the duplicate check and
// without the topic's size limit).
func TestParseDocumentIsReadJSONLsLine(t *testing.T) {
	lines := []string{
		`{"id":"a","title":"A","body":"B","url":"http://x/y","kind":"k","import_path":"p","source":"s","metadata":{"x":1,"y":"z","n":null}}`,
		`{"id":"a"}`, `{"title":"T"}`, `{"id":"a","title":"T","metadata":{"k":{}}}`, `{"id":"a","title":"<b>"}`,
		`{"id":"a","title":"T","url":"https://u@h/"}`, `{"id":7}`, `{`, "\xff",
	}
	for _, line := range lines {
		docs, bad, err := ReadJSONL(strings.NewReader(line+"\n"), false)
		if err != nil {
			t.Fatal(err)
		}
		doc, perr := ParseDocument([]byte(line))
		switch {
		case len(bad) == 1:
			if perr == nil || !strings.HasSuffix(perr.Error(), bad[0].Err.Error()) {
				t.Errorf("%q: ReadJSONL %v, ParseDocument %v", line, bad[0].Err, perr)
			}
		case perr != nil || len(docs) != 1 || !reflect.DeepEqual(docs[0], doc):
			t.Errorf("%q: ReadJSONL %+v, ParseDocument %+v, %v", line, docs, doc, perr)
		}
	}
}

// TestEncodeDocumentRoundTripsTheGoCorpus: every document of the Go
// corpus comes back from its topic value unchanged, within the size limit.
func TestEncodeDocumentRoundTripsTheGoCorpus(t *testing.T) {
	docs := stdlibDocs(t)
	largest := 0
	for _, d := range docs {
		value, err := EncodeDocument(d)
		if err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		largest = max(largest, len(value))
		got, err := ParseDocument(value)
		if err != nil || !reflect.DeepEqual(got, d) {
			t.Fatalf("%s: got %+v, %v; want %+v", d.ID, got, err, d)
		}
		if got.Hash() != d.Hash() {
			t.Fatalf("%s: hash changed", d.ID)
		}
	}
	t.Logf("%d documents, largest value %d bytes (limit %d)", len(docs), largest, messages.MaxDocumentBytes)
}

func TestEncodeDocument(t *testing.T) {
	d := search.Document{ID: "faq-1", Title: "a < b & c", Body: "x", Source: "help", Metadata: map[string]string{"z": "1", "a": "2"}}
	value, err := EncodeDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"faq-1","title":"a < b & c","body":"x","source":"help","metadata":{"a":"2","z":"1"}}`; string(value) != want {
		t.Errorf("value %s, want %s", value, want)
	}
	for _, tt := range []struct {
		d   search.Document
		err error
	}{
		{search.Document{ID: "e"}, errEmptyDocument},
		{search.Document{Title: "no id"}, errMissingID},
		{search.Document{ID: "big", Body: strings.Repeat("x", messages.MaxDocumentBytes)}, errTooLarge},
		{search.Document{ID: "js", Title: "T", URL: "javascript:x"}, errBadURL},
	} {
		if b, err := EncodeDocument(tt.d); !errors.Is(err, tt.err) || b != nil {
			t.Errorf("%.20s: %d bytes, err %v; want %v", tt.d.ID, len(b), err, tt.err)
		}
	}
}

// FuzzParseDocument: no value makes ParseDocument panic, and a document
// it accepts encodes to a value it reads back as the same document.
func FuzzParseDocument(f *testing.F) {
	for _, s := range []string{`{"id":"a","title":"A"}`, `{"id":"a","body":"b","metadata":{"k":1.5e3,"v":"<x"}}`, `null`, `{"id":"a","title":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		d, err := ParseDocument(value)
		if err != nil {
			return
		}
		enc, err := EncodeDocument(d)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", value, err)
		}
		again, err := ParseDocument(enc)
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("%q: round trip gave %+v, %v; want %+v", value, again, err, d)
		}
	})
}

// TestReadJSONLForTopic: a line whose document is over the topic's limit
// is a bad line with its number, which ReadJSONL keeps; strict mode stops
// at it.
func TestReadJSONLForTopic(t *testing.T) {
	huge := `{"id":"huge","body":"` + strings.Repeat("h", messages.MaxDocumentBytes) + `"}`
	input := `{"id":"a","title":"A"}` + "\n" + huge + "\n" + `{"id":"b"}` + "\n" + `{"id":"c","title":"C"}` + "\n"
	docs, bad, err := ReadJSONLForTopic(strings.NewReader(input), false)
	if err != nil || len(docs) != 2 || docs[0].ID != "a" || docs[1].ID != "c" {
		t.Fatalf("docs %d, err %v", len(docs), err)
	}
	checkBad(t, bad, []badLine{{line: 2, id: "huge", err: errTooLarge}, {line: 3, id: "b", err: errEmptyDocument}})
	if docs, _, err := ReadJSONL(strings.NewReader(input), false); err != nil || len(docs) != 3 {
		t.Fatalf("ReadJSONL: %d docs, %v", len(docs), err)
	}
	var lerr *LineError
	if _, _, err := ReadJSONLForTopic(strings.NewReader(input), true); !errors.As(err, &lerr) || lerr.Line != 2 || !errors.Is(err, errTooLarge) {
		t.Fatalf("strict: %.200v", err)
	}
}
