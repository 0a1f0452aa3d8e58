// SPDX-License-Identifier: Apache-2.0

package corpus_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// documentSchema compiles messages' document schema, the one of a record
// value of the documents topic, whose decoder is corpus.ParseDocument.
func documentSchema(t *testing.T) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	b, err := messages.Schema(messages.PayloadDocument)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("document schema is not JSON: %v", err)
	}
	url := messages.SchemaBaseURL + messages.PayloadDocument + ".schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile the document schema: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return sch, raw
}

func schemaAccepts(sch *jsonschema.Schema, body string) bool {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	return err == nil && sch.Validate(inst) == nil
}

// TestDocumentSchemaAgreement: the document schema and ParseDocument
// reach the same verdict on each case. Cases the schema cannot express
// carry a schemaDiffers reason; for them the verdicts must really differ,
// so that a stale exclusion is noticed.
func TestDocumentSchemaAgreement(t *testing.T) {
	sch, _ := documentSchema(t)
	big := `{"id":"big","body":"` + strings.Repeat("b", messages.MaxDocumentBytes) + `"}`
	cases := []struct {
		name, body, schemaDiffers string
		accept                    bool
	}{
		{"minimal title", `{"id":"a","title":"A"}`, "", true},
		{"minimal body", `{"id":"a","body":"B"}`, "", true},
		{"every field", `{"id":"p.F","title":"p.F","body":"x","kind":"func","import_path":"p","url":"https://pkg.go.dev/p#F","source":"go-stdlib","metadata":{"s":"v","n":1.5,"b":true,"z":null}}`, "", true},
		{"null title, body given", `{"id":"a","title":null,"body":"B","extra":null}`, "", true},
		{"nulls count as absent", `{"id":"a","title":"A","body":null,"kind":null,"import_path":null,"url":null,"source":null,"metadata":null}`, "", true},
		{"unknown members ignored", `{"id":"a","title":"A","extra":{"x":[1]}}`, "", true},
		{"empty url", `{"id":"a","title":"A","url":""}`, "", true},
		{"upper-case scheme", `{"id":"a","title":"A","url":"HTTPS://pkg.go.dev/archive/zip?x=1#y"}`, "", true},
		{"http host only", `{"id":"a","title":"A","url":"http://wiki"}`, "", true},
		{"text that looks like markup", `{"id":"a","title":"a < b, chan<- int, <3","metadata":{"cmp":"1 < 2"}}`, "", true},
		{"markup in the body", `{"id":"a","body":"<script>x</script>"}`, "", true},
		{"id of 512 bytes", `{"id":"` + strings.Repeat("i", 512) + `","title":"A"}`, "", true},

		{"not an object", `[1]`, "", false},
		{"null", `null`, "", false},
		{"no id", `{"title":"A"}`, "", false},
		{"null id", `{"id":null,"title":"A"}`, "", false},
		{"empty id", `{"id":"","title":"A"}`, "", false},
		{"blank id", `{"id":" \u3000","title":"A"}`, "", false},
		{"number id", `{"id":7,"title":"A"}`, "", false},
		{"id of 513 bytes", `{"id":"` + strings.Repeat("i", 513) + `","title":"A"}`, "", false},
		{"id of 300 two-byte characters", `{"id":"` + strings.Repeat("é", 300) + `","title":"A"}`, "maxLength counts characters: 300 characters, 600 bytes", false},
		{"no title nor body", `{"id":"a"}`, "", false},
		{"blank title and body", `{"id":"a","title":" \t","body":"\n"}`, "", false},
		{"null title and body", `{"id":"a","title":null,"body":null}`, "", false},
		{"number title", `{"id":"a","title":1}`, "", false},
		{"nested metadata", `{"id":"a","title":"A","metadata":{"k":{"x":1}}}`, "", false},
		{"array metadata value", `{"id":"a","title":"A","metadata":{"k":[1]}}`, "", false},
		{"metadata not an object", `{"id":"a","title":"A","metadata":"x"}`, "", false},
		{"javascript url", `{"id":"a","title":"A","url":"javascript:alert(1)"}`, "", false},
		{"relative url", `{"id":"a","title":"A","url":"/kb/17"}`, "", false},
		{"scheme-relative url", `{"id":"a","title":"A","url":"//evil.example/x"}`, "", false},
		{"no host", `{"id":"a","title":"A","url":"https:///path"}`, "", false},
		{"user info", `{"id":"a","title":"A","url":"https://pkg.go.dev@evil.example/"}`, "", false},
		{"leading space", `{"id":"a","title":"A","url":" https://x/"}`, "", false},
		{"bad port", `{"id":"a","title":"A","url":"https://x:port/"}`, "net/url checks the port", false},
		{"markup in the title", `{"id":"a","title":"Reset <img src=x onerror=alert(1)>"}`, "", false},
		{"comment in the title", `{"id":"a","title":"<!-- x -->"}`, "", false},
		{"markup in a metadata value", `{"id":"a","title":"A","metadata":{"team":"<b>go</b>"}}`, "", false},
		{"markup in a metadata key", `{"id":"a","title":"A","metadata":{"<i>k</i>":"v"}}`, "", false},
		{"over the size limit", big, "a schema cannot state a size in bytes", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := corpus.ParseDocument([]byte(tc.body))
			if (err == nil) != tc.accept {
				t.Fatalf("ParseDocument: %.200v, want accept=%v", err, tc.accept)
			}
			got := schemaAccepts(sch, tc.body)
			if tc.schemaDiffers != "" {
				if got == tc.accept {
					t.Errorf("schema and decoder agree (accept=%v), but the case is excluded because %s", got, tc.schemaDiffers)
				}
				return
			}
			if got != tc.accept {
				t.Errorf("schema accepts: %v, decoder accepts: %v", got, tc.accept)
			}
		})
	}
}

// TestDocumentSchemaExamples: every example of the document schema passes
// both the schema and ParseDocument.
func TestDocumentSchemaExamples(t *testing.T) {
	sch, raw := documentSchema(t)
	examples, _ := raw["examples"].([]any)
	if len(examples) == 0 {
		t.Fatal("the document schema has no examples")
	}
	for i, ex := range examples {
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		if !schemaAccepts(sch, string(b)) {
			t.Errorf("example %d fails its schema: %s", i, b)
		}
		if _, err := corpus.ParseDocument(b); err != nil {
			t.Errorf("example %d fails ParseDocument: %v", i, err)
		}
	}
}

// TestDocumentSchemaEncoded: what EncodeDocument writes passes the schema.
func TestDocumentSchemaEncoded(t *testing.T) {
	sch, _ := documentSchema(t)
	for _, d := range []search.Document{
		{ID: "a", Title: "A", Source: "s"},
		{ID: "net/url", Title: "net/url", Body: "Package url parses URLs.", Kind: "package", ImportPath: "net/url", URL: "https://pkg.go.dev/net/url", Source: "go-stdlib"},
		{ID: "faq", Body: "x < y", Metadata: map[string]string{"lang": "en", "empty": ""}},
	} {
		b, err := corpus.EncodeDocument(d)
		if err != nil {
			t.Fatal(err)
		}
		if !schemaAccepts(sch, string(b)) {
			t.Errorf("schema rejects encoded %s", b)
		}
	}
}
