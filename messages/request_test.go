// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// requestCase is a request record value and what DecodeRequest must make
// of it. schema_test.go checks the same table against the JSON Schema.
type requestCase struct {
	name  string
	body  string
	want  messages.Request // for valid cases; an empty RequestID means a generated one
	kind  string           // valid, decodeErr or invalidErr
	field string           // ValidationError.Field for invalidErr
	// schemaDiffers, when set, says why JSON Schema cannot reach the
	// decoder's verdict, and excludes the case from the agreement test.
	schemaDiffers string
}

// req returns a decoded request: decoding always sets SchemaVersion.
func req(id, query string, topK int) messages.Request {
	return messages.Request{SchemaVersion: messages.SchemaVersion, RequestID: id, Query: query, TopK: topK}
}

func requestCases() []requestCase {
	const (
		notUTF8 = "JSON Schema sees strings after decoding, where encoding/json has already replaced invalid UTF-8 with U+FFFD"
		bytesVs = "maxLength counts code points; the query limit counts bytes, so multi-byte text between 4096 bytes and 4096 characters passes the schema"
	)
	q4096 := strings.Repeat("q", messages.MaxQueryBytes)
	e2048 := strings.Repeat("é", messages.MaxQueryBytes/2) // 4096 bytes
	id128 := strings.Repeat("ü", messages.MaxRequestIDLen) // 128 runes, 256 bytes
	return []requestCase{
		// Accepted.
		{name: "minimal", body: `{"query":"x"}`, want: req("", "x", 10)},
		{name: "full", body: `{"schema_version":1,"request_id":"req-1","query":"kafka lag","top_k":5}`, want: req("req-1", "kafka lag", 5)},
		{name: "unknown fields ignored", body: `{"query":"x","extra":{"a":[1,null]},"tenant":"t1"}`, want: req("", "x", 10)},
		{name: "names are case-sensitive", body: `{"query":"x","Top_K":"bad","QUERY":5}`, want: req("", "x", 10)},
		{name: "whitespace around object", body: " \n\t{\"query\":\"x\"}\r\n ", want: req("", "x", 10)},
		{name: "schema_version 0", body: `{"schema_version":0,"query":"x"}`, want: req("", "x", 10)},
		{name: "schema_version null", body: `{"schema_version":null,"query":"x"}`, want: req("", "x", 10)},
		{name: "schema_version 2", body: `{"schema_version":2,"query":"x"}`, want: req("", "x", 10)},
		{name: "schema_version 1.0", body: `{"schema_version":1.0,"query":"x"}`, want: req("", "x", 10)},
		{name: "request_id null", body: `{"request_id":null,"query":"x"}`, want: req("", "x", 10)},
		{name: "request_id empty", body: `{"request_id":"","query":"x"}`, want: req("", "x", 10)},
		{name: "request_id 128 ascii", body: `{"request_id":` + jstr(strings.Repeat("i", 128)) + `,"query":"x"}`, want: req(strings.Repeat("i", 128), "x", 10)},
		{name: "request_id 128 runes", body: `{"request_id":` + jstr(id128) + `,"query":"x"}`, want: req(id128, "x", 10)},
		{name: "request_id inner space", body: `{"request_id":"a b","query":"x"}`, want: req("a b", "x", 10)},
		{name: "request_id one char", body: `{"request_id":"a","query":"x"}`, want: req("a", "x", 10)},
		{name: "query 4096 bytes", body: `{"query":"` + q4096 + `"}`, want: req("", q4096, 10)},
		{name: "query 4096 bytes multi-byte", body: `{"query":"` + e2048 + `"}`, want: req("", e2048, 10)},
		{name: "query escapes", body: `{"query":"caf\u00e9 \"x\"\n"}`, want: req("", "café \"x\"\n", 10)},
		{name: "query zero-width space is not whitespace", body: `{"query":"\u200b"}`, want: req("", "\u200b", 10)},
		{name: "query lone surrogate escape", body: `{"query":"\ud800"}`, want: req("", "\ufffd", 10)},
		{name: "query padded", body: `{"query":"  x  "}`, want: req("", "  x  ", 10)},
		{name: "duplicate name keeps last", body: `{"query":" ","query":"x"}`, want: req("", "x", 10)},
		{name: "top_k 1", body: `{"query":"x","top_k":1}`, want: req("", "x", 1)},
		{name: "top_k 100", body: `{"query":"x","top_k":100}`, want: req("", "x", 100)},
		{name: "top_k null", body: `{"query":"x","top_k":null}`, want: req("", "x", 10)},
		{name: "top_k 10.0", body: `{"query":"x","top_k":10.0}`, want: req("", "x", 10)},
		{name: "top_k 1e1", body: `{"query":"x","top_k":1e1}`, want: req("", "x", 10)},
		{name: "top_k 1.00E+2", body: `{"query":"x","top_k":1.00E+2}`, want: req("", "x", 100)},
		{name: "top_k 1000e-1", body: `{"query":"x","top_k":1000e-1}`, want: req("", "x", 100)},

		// Not a single JSON object.
		{name: "empty body", body: ``, kind: decodeErr},
		{name: "blank body", body: " \n ", kind: decodeErr},
		{name: "null", body: `null`, kind: decodeErr},
		{name: "array", body: `[{"query":"x"}]`, kind: decodeErr},
		{name: "string", body: `"x"`, kind: decodeErr},
		{name: "number", body: `42`, kind: decodeErr},
		{name: "truncated", body: `{"query":"x"`, kind: decodeErr},
		{name: "trailing garbage", body: `{"query":"x"} x`, kind: decodeErr},
		{name: "two objects", body: `{"query":"x"}{"query":"y"}`, kind: decodeErr},
		{name: "trailing comma", body: `{"query":"x",}`, kind: decodeErr},
		{name: "single quotes", body: `{'query':'x'}`, kind: decodeErr},
		{name: "ignored member invalid utf-8", body: "{\"query\":\"x\",\"extra\":\"\xff\"}", kind: decodeErr, schemaDiffers: notUTF8},
		{name: "ignored nested member invalid utf-8", body: "{\"query\":\"x\",\"extra\":[{\"a\":\"\xc3\"}]}", kind: decodeErr, schemaDiffers: notUTF8},
		{name: "member name invalid utf-8", body: "{\"query\":\"x\",\"\xfe\":1}", kind: decodeErr, schemaDiffers: notUTF8},

		// schema_version.
		{name: "schema_version 3", body: `{"schema_version":3,"query":"x"}`, kind: invalidErr, field: "schema_version"},
		{name: "schema_version -1", body: `{"schema_version":-1,"query":"x"}`, kind: invalidErr, field: "schema_version"},
		{name: "schema_version string", body: `{"schema_version":"1","query":"x"}`, kind: invalidErr, field: "schema_version"},
		{name: "schema_version checked first", body: `{"schema_version":3,"top_k":0}`, kind: invalidErr, field: "schema_version"},

		// request_id.
		{name: "request_id 129 ascii", body: `{"request_id":` + jstr(strings.Repeat("i", 129)) + `,"query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id 129 runes", body: `{"request_id":` + jstr(id128+"ü") + `,"query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id leading space", body: `{"request_id":" a","query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id trailing ideographic space", body: `{"request_id":"a\u3000","query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id only space", body: `{"request_id":" ","query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id newline", body: `{"request_id":"a\nb","query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id NUL", body: `{"request_id":"a\u0000b","query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id C1 control", body: `{"request_id":"a\u0085b","query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id DEL", body: `{"request_id":"a\u007f","query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id number", body: `{"request_id":7,"query":"x"}`, kind: invalidErr, field: "request_id"},
		{name: "request_id invalid utf-8", body: "{\"request_id\":\"a\xffb\",\"query\":\"x\"}", kind: invalidErr, field: "request_id", schemaDiffers: notUTF8},

		// query.
		{name: "query missing", body: `{"request_id":"r"}`, kind: invalidErr, field: "query"},
		{name: "query null", body: `{"query":null}`, kind: invalidErr, field: "query"},
		{name: "query empty", body: `{"query":""}`, kind: invalidErr, field: "query"},
		{name: "query number", body: `{"query":5}`, kind: invalidErr, field: "query"},
		{name: "query array", body: `{"query":["x"]}`, kind: invalidErr, field: "query"},
		{name: "query 4097 bytes", body: `{"query":"` + q4096 + `q"}`, kind: invalidErr, field: "query"},
		{name: "query 4097 bytes multi-byte", body: `{"query":"` + e2048 + `q"}`, kind: invalidErr, field: "query", schemaDiffers: bytesVs},
		{name: "query whitespace only", body: `{"query":" \t\r\n"}`, kind: invalidErr, field: "query"},
		{name: "query unicode whitespace only", body: `{"query":"\u00a0\u2003\u3000\u2028\u0085\u000b"}`, kind: invalidErr, field: "query"},
		{name: "query invalid utf-8", body: "{\"query\":\"caf\xe9\"}", kind: invalidErr, field: "query", schemaDiffers: notUTF8},
		{name: "query truncated utf-8", body: "{\"query\":\"\xe2\x82\"}", kind: invalidErr, field: "query", schemaDiffers: notUTF8},
		{name: "names are case-sensitive query", body: `{"Query":"x"}`, kind: invalidErr, field: "query"},

		// top_k.
		{name: "top_k 0", body: `{"query":"x","top_k":0}`, kind: invalidErr, field: "top_k"},
		{name: "top_k 101", body: `{"query":"x","top_k":101}`, kind: invalidErr, field: "top_k"},
		{name: "top_k -1", body: `{"query":"x","top_k":-1}`, kind: invalidErr, field: "top_k"},
		{name: "top_k -0", body: `{"query":"x","top_k":-0}`, kind: invalidErr, field: "top_k"},
		{name: "top_k 2.5", body: `{"query":"x","top_k":2.5}`, kind: invalidErr, field: "top_k"},
		{name: "top_k 100.5", body: `{"query":"x","top_k":100.5}`, kind: invalidErr, field: "top_k"},
		{name: "top_k string", body: `{"query":"x","top_k":"10"}`, kind: invalidErr, field: "top_k"},
		{name: "top_k bool", body: `{"query":"x","top_k":true}`, kind: invalidErr, field: "top_k"},
		{name: "top_k object", body: `{"query":"x","top_k":{}}`, kind: invalidErr, field: "top_k"},
		{name: "top_k 1e400", body: `{"query":"x","top_k":1e400}`, kind: invalidErr, field: "top_k"},
		{name: "top_k 1e-400", body: `{"query":"x","top_k":1e-400}`, kind: invalidErr, field: "top_k"},
		{name: "top_k huge", body: `{"query":"x","top_k":123456789012345678901234567890}`, kind: invalidErr, field: "top_k"},
		{name: "top_k huge negative", body: `{"query":"x","top_k":-123456789012345678901234567890}`, kind: invalidErr, field: "top_k"},
	}
}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range requestCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := messages.DecodeRequest([]byte(tc.body))
			checkErr(t, err, tc.kind, messages.PayloadRequest, tc.field)
			if tc.kind != valid {
				if got != (messages.Request{}) {
					t.Errorf("got %+v with an error, want the zero Request", got)
				}
				return
			}
			want := tc.want
			if want.RequestID == "" {
				if !ulidRE.MatchString(got.RequestID) {
					t.Fatalf("generated RequestID %q is not a ULID", got.RequestID)
				}
				want.RequestID = got.RequestID
			}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestDecodeRequestGeneratesDistinctIDs(t *testing.T) {
	body := []byte(`{"query":"x"}`)
	a, errA := messages.DecodeRequest(body)
	b, errB := messages.DecodeRequest(body)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	if a.RequestID == b.RequestID {
		t.Errorf("both decodes generated %q", a.RequestID)
	}
}

func TestDecodeRequestErrorText(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{``, "decode request: empty body"},
		{`[]`, "decode request: not a json object"},
		{`null`, "decode request: not a json object"},
		{`{"query":"x"} x`, "decode request: invalid json at byte 15"},
		{`{"query":"x"`, "decode request: unexpected end of JSON input"},
		{"{\"query\":\"x\",\"extra\":\"a\xffb\"}", "decode request: invalid utf-8 at byte 23"},
		{"{\"query\":\"x\xff\"}", "invalid request: query: must be valid utf-8"},
		{`{"query":"x","top_k":0}`, "invalid request: top_k: must be between 1 and 100"},
		{`{"query":"x","top_k":2.5}`, "invalid request: top_k: must be an integer"},
		{`{"query":"x","schema_version":3}`, "invalid request: schema_version: unsupported"},
		{`{}`, "invalid request: query: required"},
		{`{"query":"  "}`, "invalid request: query: must not be only whitespace"},
		{`{"query":"x","request_id":" r"}`, "invalid request: request_id: must not have leading or trailing whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := messages.DecodeRequest([]byte(tt.body))
			if err == nil || err.Error() != tt.want {
				t.Errorf("DecodeRequest(%q) error = %v, want %q", tt.body, err, tt.want)
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	ok := messages.Request{RequestID: "r", Query: "q", TopK: 10}
	tests := []struct {
		name  string
		edit  func(*messages.Request)
		field string // "" when valid
	}{
		{name: "valid", edit: func(*messages.Request) {}},
		{name: "schema_version 1", edit: func(r *messages.Request) { r.SchemaVersion = 1 }},
		{name: "schema_version 2", edit: func(r *messages.Request) { r.SchemaVersion = 2 }},
		{name: "schema_version 3", edit: func(r *messages.Request) { r.SchemaVersion = 3 }, field: "schema_version"},
		{name: "schema_version -1", edit: func(r *messages.Request) { r.SchemaVersion = -1 }, field: "schema_version"},
		{name: "request_id empty", edit: func(r *messages.Request) { r.RequestID = "" }, field: "request_id"},
		{name: "request_id invalid utf-8", edit: func(r *messages.Request) { r.RequestID = "a\xff" }, field: "request_id"},
		{name: "request_id tab", edit: func(r *messages.Request) { r.RequestID = "a\tb" }, field: "request_id"},
		{name: "query empty", edit: func(r *messages.Request) { r.Query = "" }, field: "query"},
		{name: "query invalid utf-8", edit: func(r *messages.Request) { r.Query = "\xff" }, field: "query"},
		{name: "top_k unset", edit: func(r *messages.Request) { r.TopK = 0 }, field: "top_k"},
		{name: "top_k 101", edit: func(r *messages.Request) { r.TopK = 101 }, field: "top_k"},
		{name: "first failure wins", edit: func(r *messages.Request) { r.RequestID, r.TopK = "", 0 }, field: "request_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			kind := valid
			if tt.field != "" {
				kind = invalidErr
			}
			checkErr(t, r.Validate(), kind, messages.PayloadRequest, tt.field)
		})
	}
}

func TestEncodeRequest(t *testing.T) {
	tests := []struct {
		name  string
		in    messages.Request
		want  string
		field string
	}{
		{
			name: "fills schema_version",
			in:   messages.Request{RequestID: "r-1", Query: "kafka <lag> & co", TopK: 3},
			want: `{"schema_version":1,"request_id":"r-1","query":"kafka \u003clag\u003e \u0026 co","top_k":3}`,
		},
		{
			name: "keeps schema_version 1",
			in:   messages.Request{SchemaVersion: 1, RequestID: "r", Query: "q", TopK: 100},
			want: `{"schema_version":1,"request_id":"r","query":"q","top_k":100}`,
		},
		{name: "missing id", in: messages.Request{Query: "q", TopK: 3}, field: "request_id"},
		{name: "top_k unset", in: messages.Request{RequestID: "r", Query: "q"}, field: "top_k"},
		{
			name: "writes schema_version 1 for version 2",
			in:   messages.Request{SchemaVersion: 2, RequestID: "r", Query: "q", TopK: 1},
			want: `{"schema_version":1,"request_id":"r","query":"q","top_k":1}`,
		},
		{name: "future version", in: messages.Request{SchemaVersion: 3, RequestID: "r", Query: "q", TopK: 1}, field: "schema_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := messages.EncodeRequest(tt.in)
			if tt.field != "" {
				checkErr(t, err, invalidErr, messages.PayloadRequest, tt.field)
				if b != nil {
					t.Errorf("got output %s with an error", b)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
}

func TestRequestRoundTrip(t *testing.T) {
	tests := []messages.Request{
		{RequestID: "r", Query: "q", TopK: 1},
		{SchemaVersion: 1, RequestID: strings.Repeat("ü", 128), Query: strings.Repeat("é", 2048), TopK: 100},
		{RequestID: "01JDQ3Z7W8X2K4M6N8P0R2T4V6", Query: "line\nbreak\t\"quoted\" \u2028 <html>", TopK: 10},
	}
	for _, in := range tests {
		t.Run(in.Query[:1], func(t *testing.T) {
			b, err := messages.EncodeRequest(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := messages.DecodeRequest(b)
			if err != nil {
				t.Fatal(err)
			}
			want := in
			want.SchemaVersion = messages.SchemaVersion
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestRequestWithDefaults(t *testing.T) {
	got := messages.Request{Query: "q"}.WithDefaults()
	if !ulidRE.MatchString(got.RequestID) {
		t.Errorf("RequestID %q is not a ULID", got.RequestID)
	}
	if got.SchemaVersion != messages.SchemaVersion || got.TopK != messages.DefaultTopK || got.Query != "q" {
		t.Errorf("got %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	set := messages.Request{SchemaVersion: 1, RequestID: "r", Query: "q", TopK: 7}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults changed a complete request: got %+v, want %+v", got, set)
	}
}

func TestDecodeRequestKeyed(t *testing.T) {
	tests := []struct {
		name, value, key, want string
	}{
		{"body id wins over key", `{"request_id":"body","query":"q"}`, "key", "body"},
		{"key used when body has none", `{"query":"q"}`, "key-1", "key-1"},
		{"empty body id uses key", `{"request_id":"","query":"q"}`, "key-2", "key-2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := messages.DecodeRequestKeyed([]byte(tt.value), []byte(tt.key))
			if err != nil {
				t.Fatal(err)
			}
			if r.RequestID != tt.want {
				t.Fatalf("request id %q, want %q", r.RequestID, tt.want)
			}
		})
	}
	for name, key := range map[string]string{"no key": "", "invalid key": " padded ", "control char": "a\x01b", "too long": strings.Repeat("k", 129)} {
		t.Run(name, func(t *testing.T) {
			r, err := messages.DecodeRequestKeyed([]byte(`{"query":"q"}`), []byte(key))
			if err != nil {
				t.Fatal(err)
			}
			if r.RequestID == key || len(r.RequestID) != 26 {
				t.Fatalf("request id %q: want a generated id", r.RequestID)
			}
		})
	}
}

// TestCanonicalRequestIsDecodeThenEncode: CanonicalRequest refuses what
// DecodeRequest refuses, with the same error, and returns what it decodes
// with the bytes EncodeRequest writes for it.
func TestCanonicalRequestIsDecodeThenEncode(t *testing.T) {
	for _, body := range []string{
		`{"query":"gzip"}`,
		`{"query":"gzip","top_k":3,"request_id":"r-1"}`,
		`{"query":"gzip","top_k":0}`,
		`{"query":""}`,
		`{"query":"gzip","top_k":1000000}`,
		`{"query":`,
		`[]`,
		`{"query":"gzip","schema_version":99}`,
	} {
		want, wantErr := messages.DecodeRequest([]byte(body))
		got, value, err := messages.CanonicalRequest([]byte(body))
		if wantErr != nil {
			if err == nil || err.Error() != wantErr.Error() || value != nil {
				t.Errorf("%s: CanonicalRequest = %v, %q; DecodeRequest refused it with %v", body, err, value, wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if body != `{"query":"gzip"}` && got != want { // a generated id differs
			t.Errorf("%s: request %+v, want %+v", body, got, want)
		}
		enc, err := messages.EncodeRequest(got)
		if err != nil || string(enc) != string(value) {
			t.Errorf("%s: value %s, EncodeRequest writes %s (%v)", body, value, enc, err)
		}
	}
}
