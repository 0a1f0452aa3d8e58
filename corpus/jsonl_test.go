// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kretrieve/kretrieve/search"
)

// badLine is the expected form of a LineError.
type badLine struct {
	line int
	id   string
	err  error
}

func TestReadJSONL(t *testing.T) {
	longBody := strings.Repeat("a", 1<<20)
	tests := []struct {
		name    string
		input   string
		wantIDs []string
		wantBad []badLine
	}{
		{
			name:    "good lines",
			input:   `{"id":"a","title":"A"}` + "\n" + `{"id":"b","body":"B"}` + "\n",
			wantIDs: []string{"a", "b"},
		},
		{
			name:  "empty input",
			input: "",
		},
		{
			name:    "no final newline",
			input:   `{"id":"a","title":"A"}` + "\n" + `{"id":"b","title":"B"}`,
			wantIDs: []string{"a", "b"},
		},
		{
			name:    "blank lines count",
			input:   "\n  \n" + `{"id":"a","title":"A"}` + "\n\t\n" + `{bad` + "\n\n",
			wantIDs: []string{"a"},
			wantBad: []badLine{{line: 5, err: errInvalidJSON}},
		},
		{
			name:    "CRLF line endings",
			input:   `{"id":"a","title":"A","body":"x"}` + "\r\n\r\n" + `{"id":"b","title":"B"}` + "\r\n" + `{"id":""}` + "\r\n",
			wantIDs: []string{"a", "b"},
			wantBad: []badLine{{line: 4, err: errMissingID}},
		},
		{
			name:    "byte order mark",
			input:   "\uFEFF" + `{"id":"a","title":"A"}` + "\n",
			wantIDs: []string{"a"},
		},
		{
			name:    "invalid JSON",
			input:   `{"id":"a","title":"A"}` + "\n" + `{"id":"b"` + "\n" + `[1]` + "\n" + `{"id":"c","title":"C"} {}` + "\n" + `{"id":7,"title":"x"}` + "\n",
			wantIDs: []string{"a"},
			wantBad: []badLine{{line: 2, err: errInvalidJSON}, {line: 3, err: errInvalidJSON}, {line: 4, err: errInvalidJSON}, {line: 5, err: errInvalidJSON}},
		},
		{
			name:    "missing or empty id",
			input:   `{"title":"A"}` + "\n" + `{"id":"","title":"A"}` + "\n" + `{"id":"  ","title":"A"}` + "\n" + `null` + "\n",
			wantBad: []badLine{{line: 1, err: errMissingID}, {line: 2, err: errMissingID}, {line: 3, id: "  ", err: errMissingID}, {line: 4, err: errMissingID}},
		},
		{
			name:    "title and body empty",
			input:   `{"id":"a"}` + "\n" + `{"id":"b","title":" ","body":""}` + "\n" + `{"id":"c","url":"https://x"}` + "\n",
			wantBad: []badLine{{line: 1, id: "a", err: errEmptyDocument}, {line: 2, id: "b", err: errEmptyDocument}, {line: 3, id: "c", err: errEmptyDocument}},
		},
		{
			name:    "duplicate id, later line bad",
			input:   `{"id":"x","title":"first"}` + "\n" + `{"id":"y","title":"Y"}` + "\n" + `{"id":"x","title":"second"}` + "\n",
			wantIDs: []string{"x", "y"},
			wantBad: []badLine{{line: 3, id: "x", err: errDuplicateID}},
		},
		{
			name:    "bad line does not claim its id",
			input:   `{"id":"x"}` + "\n" + `{"id":"x","title":"X"}` + "\n",
			wantIDs: []string{"x"},
			wantBad: []badLine{{line: 1, id: "x", err: errEmptyDocument}},
		},
		{
			name:    "id length limit",
			input:   `{"id":"` + strings.Repeat("i", MaxIDBytes) + `","title":"ok"}` + "\n" + `{"id":"` + strings.Repeat("j", MaxIDBytes+1) + `","title":"long"}` + "\n",
			wantIDs: []string{strings.Repeat("i", MaxIDBytes)},
			wantBad: []badLine{{line: 2, id: strings.Repeat("j", MaxIDBytes+1), err: errIDTooLong}},
		},
		{
			name:    "invalid UTF-8",
			input:   `{"id":"a","title":"caf` + "\xe9" + `"}` + "\n" + `{"id":"b","title":"café"}` + "\n",
			wantIDs: []string{"b"},
			wantBad: []badLine{{line: 1, err: errInvalidUTF8}},
		},
		{
			name:    "nested metadata",
			input:   `{"id":"a","title":"A","metadata":{"k":{"x":1}}}` + "\n" + `{"id":"b","title":"B","metadata":{"k":[1]}}` + "\n" + `{"id":"c","title":"C","metadata":{"k":1}}` + "\n",
			wantIDs: []string{"c"},
			wantBad: []badLine{{line: 1, id: "a", err: errNestedMetadata}, {line: 2, id: "b", err: errNestedMetadata}},
		},
		{
			name:    "metadata not an object",
			input:   `{"id":"a","title":"A","metadata":"x"}` + "\n",
			wantBad: []badLine{{line: 1, err: errInvalidJSON}},
		},
		{
			name:    "1 MiB line",
			input:   `{"id":"big","body":"` + longBody + `"}` + "\n" + `{"id":"after","title":"T"}` + "\n",
			wantIDs: []string{"big", "after"},
		},
		{
			name:    "line over the limit",
			input:   `{"id":"huge","body":"` + strings.Repeat("h", MaxLineBytes) + `"}` + "\n" + `{"id":"after","title":"T"}` + "\n",
			wantIDs: []string{"after"},
			wantBad: []badLine{{line: 1, err: errLineTooLong}},
		},
		{
			name:    "line one byte over the limit",
			input:   `{"id":"over","body":"` + strings.Repeat("o", MaxLineBytes+1-len(`{"id":"over","body":""}`)) + `"}` + "\n",
			wantBad: []badLine{{line: 1, err: errLineTooLong}},
		},
		{
			name:    "line at the limit with CRLF",
			input:   `{"id":"max","body":"` + strings.Repeat("m", MaxLineBytes-len(`{"id":"max","body":""}`)) + `"}` + "\r\n",
			wantIDs: []string{"max"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, bad, err := ReadJSONL(strings.NewReader(tt.input), false)
			if err != nil {
				t.Fatalf("ReadJSONL: %v", err)
			}
			var ids []string
			for _, d := range docs {
				ids = append(ids, d.ID)
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Errorf("IDs = %.80q, want %.80q", ids, tt.wantIDs)
			}
			checkBad(t, bad, tt.wantBad)

			// Strict mode stops at the first bad line, with no documents.
			docs, bad, err = ReadJSONL(strings.NewReader(tt.input), true)
			if len(tt.wantBad) == 0 {
				if err != nil || len(docs) != len(tt.wantIDs) || bad != nil {
					t.Errorf("strict: %d docs, %d bad, err %v", len(docs), len(bad), err)
				}
				return
			}
			var lerr *LineError
			if !errors.As(err, &lerr) {
				t.Fatalf("strict: err = %v, want a *LineError", err)
			}
			checkBad(t, []LineError{*lerr}, tt.wantBad[:1])
			if docs != nil || bad != nil {
				t.Errorf("strict: got %d docs, %d bad with an error", len(docs), len(bad))
			}
		})
	}
}

// checkBad compares line errors with the expected ones.
func checkBad(t *testing.T, got []LineError, want []badLine) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("bad = %v, want %d bad lines", got, len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		if g.Line != w.line || g.ID != w.id || !errors.Is(&g, w.err) {
			t.Errorf("bad[%d] = line %d id %.20q err %v; want line %d id %.20q err %v", i, g.Line, g.ID, g.Err, w.line, w.id, w.err)
		}
	}
}

func TestReadJSONLDocument(t *testing.T) {
	input := `{"id":"faq-1","title":"Reset","body":"How to reset.","url":"https://example.com/1","kind":"faq","source":"help","metadata":{"lang":"en","rank":3,"score":1.50,"big":1e3,"ok":true,"gone":null,"empty":""},"extra":"ignored"}` + "\n" +
		`{"id":"faq-2","title":"Other","metadata":{}}` + "\n"
	docs, bad, err := ReadJSONL(strings.NewReader(input), true)
	if err != nil || bad != nil {
		t.Fatalf("ReadJSONL: bad %v, err %v", bad, err)
	}
	want := []search.Document{
		{
			ID: "faq-1", Title: "Reset", Body: "How to reset.", URL: "https://example.com/1", Kind: "faq", Source: "help",
			Metadata: map[string]string{"lang": "en", "rank": "3", "score": "1.50", "big": "1e3", "ok": "true", "gone": "null", "empty": ""},
		},
		{ID: "faq-2", Title: "Other", Source: JSONLSource},
	}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("docs:\n got %#v\nwant %#v", docs, want)
	}
}

func TestLineErrorMessage(t *testing.T) {
	input := `{"id":"x","title":"1"}` + "\n\n\n\n\n\n" + `{"id":"x","title":"2"}` + "\n"
	_, _, err := ReadJSONL(strings.NewReader(input), true)
	if err == nil || err.Error() != `line 7: duplicate id "x"` {
		t.Errorf("err = %v, want line 7: duplicate id \"x\"", err)
	}
}

func TestReadJSONLReadError(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name   string
		r      io.Reader
		strict bool
	}{
		{"immediately", iotest.ErrReader(errBoom), false},
		{"after a line", io.MultiReader(strings.NewReader(`{"id":"a","title":"A"}`+"\n"), iotest.ErrReader(errBoom)), false},
		{"strict", io.MultiReader(strings.NewReader(`{"id":"a","title":"A"}`+"\n{"), iotest.ErrReader(errBoom)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, bad, err := ReadJSONL(tt.r, tt.strict)
			if !errors.Is(err, errBoom) {
				t.Errorf("err = %v, want %v", err, errBoom)
			}
			if docs != nil || bad != nil {
				t.Errorf("got %d docs, %d bad with an error", len(docs), len(bad))
			}
		})
	}
}

func TestReadJSONLFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"a","title":"A"}`+"\n"+`{"id":"a","title":"B"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	docs, bad, err := ReadJSONLFile(path, false)
	if err != nil || len(docs) != 1 || len(bad) != 1 || bad[0].Line != 2 {
		t.Errorf("non-strict: docs %v, bad %v, err %v", docs, bad, err)
	}

	_, _, err = ReadJSONLFile(path, true)
	var lerr *LineError
	if !errors.As(err, &lerr) || lerr.Line != 2 || !strings.Contains(err.Error(), path) {
		t.Errorf("strict: err = %v, want a *LineError for line 2 naming the file", err)
	}

	_, _, err = ReadJSONLFile(filepath.Join(dir, "missing.jsonl"), false)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
}

// TestReadJSONLHostile: lines a page rendering results would execute are
// bad lines, reported with their number (security #16, finding 8: the
// index took javascript: URLs and HTML in titles and metadata). Text that
// only looks like markup to a person ("a < b", "chan<- int") stays.
func TestReadJSONLHostile(t *testing.T) {
	lines := []string{
		`{"id":"js","title":"T","url":"javascript:alert(document.cookie)"}`,
		`{"id":"js-case","title":"T","url":" JavaScript:alert(1)"}`,
		`{"id":"data","title":"T","url":"data:text/html,<script>alert(1)</script>"}`,
		`{"id":"relative","title":"T","url":"/kb/17"}`,
		`{"id":"scheme-relative","title":"T","url":"//evil.example/x"}`,
		`{"id":"no-host","title":"T","url":"https:///path"}`,
		`{"id":"userinfo","title":"T","url":"https://pkg.go.dev@evil.example/"}`,
		`{"id":"title-script","title":"<script>alert(1)</script>"}`,
		`{"id":"title-img","title":"Reset <img src=x onerror=alert(1)>"}`,
		`{"id":"title-end","title":"x</title><svg onload=alert(1)>"}`,
		`{"id":"title-comment","title":"<!-- x -->"}`,
		`{"id":"meta-value","title":"T","metadata":{"team":"<b onmouseover=alert(1)>go</b>"}}`,
		`{"id":"meta-key","title":"T","metadata":{"<i>k</i>":"v"}}`,
		`{"id":"ok","title":"a < b, chan<- int, x <= y, <3","body":"<script> in a body is escaped in snippets","url":"HTTPS://pkg.go.dev/archive/zip?x=1#y","metadata":{"cmp":"1 < 2"}}`,
		`{"id":"http","title":"T","url":"http://wiki/kb-17"}`,
	}
	docs, bad, err := ReadJSONL(strings.NewReader(strings.Join(lines, "\n")+"\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	if !reflect.DeepEqual(ids, []string{"ok", "http"}) {
		t.Errorf("kept %v, want [ok http]", ids)
	}
	if docs[0].Title != "a < b, chan<- int, x <= y, <3" || docs[0].URL != "HTTPS://pkg.go.dev/archive/zip?x=1#y" {
		t.Errorf("kept document changed: %+v", docs[0])
	}
	wantErr := map[string]error{
		"js": errBadURL, "js-case": errBadURL, "data": errBadURL, "relative": errBadURL, "scheme-relative": errBadURL,
		"no-host": errBadURL, "userinfo": errBadURL, "title-script": errMarkup, "title-img": errMarkup,
		"title-end": errMarkup, "title-comment": errMarkup, "meta-value": errMarkup, "meta-key": errMarkup,
	}
	if len(bad) != len(wantErr) {
		t.Fatalf("%d bad lines, want %d: %v", len(bad), len(wantErr), bad)
	}
	for i, b := range bad {
		if b.Line != i+1 || !errors.Is(b.Err, wantErr[b.ID]) {
			t.Errorf("bad line %d (%s): %v; want line %d, %v", b.Line, b.ID, b.Err, i+1, wantErr[b.ID])
		}
	}
	_, _, err = ReadJSONL(strings.NewReader(lines[0]+"\n"), true)
	if err == nil || err.Error() != `line 1: url "javascript:alert(document.cookie)": want an absolute http or https URL` {
		t.Errorf("strict: %v", err)
	}
}

// TestWriteJSONLRoundTripsTheGoCorpus: the file WriteJSONL makes of the Go
// corpus (the image's demo corpus, `make image`) reads back, strictly and
// as `kretrieve ingest --jsonl` reads it, as the same documents.
func TestWriteJSONLRoundTripsTheGoCorpus(t *testing.T) {
	docs := stdlibDocs(t)
	var b strings.Builder
	if err := WriteJSONL(&b, docs); err != nil {
		t.Fatal(err)
	}
	got, bad, err := ReadJSONLForTopic(strings.NewReader(b.String()), true)
	if err != nil || len(bad) > 0 {
		t.Fatalf("read back: %v, bad lines %v", err, bad)
	}
	if len(got) != len(docs) {
		t.Fatalf("read back %d documents, wrote %d", len(got), len(docs))
	}
	for i := range docs {
		if docs[i].Source == "" {
			docs[i].Source = JSONLSource
		}
		if !reflect.DeepEqual(got[i], docs[i]) {
			t.Fatalf("document %d: got %+v, want %+v", i, got[i], docs[i])
		}
	}
	t.Logf("%d documents, %d bytes", len(docs), b.Len())
}

// TestWriteJSONLRefusesABadDocument: a document EncodeDocument refuses is
// WriteJSONL's error.
func TestWriteJSONLRefusesABadDocument(t *testing.T) {
	err := WriteJSONL(io.Discard, []search.Document{{ID: "x", Title: "ok", Body: "b", URL: "ftp://x"}})
	if !errors.Is(err, errBadURL) {
		t.Fatalf("err = %v, want %v", err, errBadURL)
	}
}
