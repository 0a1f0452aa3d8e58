// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kretrieve/kretrieve/messages"
)

var payloads = []string{messages.PayloadRequest, messages.PayloadCandidates, messages.PayloadResult}

func compileSchema(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	b, err := messages.Schema(name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s schema is not JSON: %v", name, err)
	}
	url := messages.SchemaBaseURL + name + ".schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile %s schema: %v", name, err)
	}
	return sch
}

// schemaAccepts reports whether body is a single JSON value that sch
// accepts.
func schemaAccepts(sch *jsonschema.Schema, body string) bool {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	return err == nil && sch.Validate(inst) == nil
}

// TestSchemaAgreement checks that each schema and its decoder reach the
// same verdict on the decoder's test table. Cases the schema cannot
// express carry a schemaDiffers reason; for them the test checks that the
// verdicts really differ, so a stale exclusion is noticed.
func TestSchemaAgreement(t *testing.T) {
	type verdictCase struct {
		name, body, schemaDiffers string
		decoderAccepts            bool
	}
	tables := map[string][]verdictCase{}
	for _, tc := range requestCases() {
		tables[messages.PayloadRequest] = append(tables[messages.PayloadRequest], verdictCase{tc.name, tc.body, tc.schemaDiffers, tc.kind == valid})
	}
	for _, tc := range candidatesCases() {
		tables[messages.PayloadCandidates] = append(tables[messages.PayloadCandidates], verdictCase{tc.name, tc.body, tc.schemaDiffers, tc.kind == valid})
	}
	for _, tc := range resultCases() {
		tables[messages.PayloadResult] = append(tables[messages.PayloadResult], verdictCase{tc.name, tc.body, tc.schemaDiffers, tc.kind == valid})
	}
	for _, name := range payloads {
		sch := compileSchema(t, name)
		for _, tc := range tables[name] {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				got := schemaAccepts(sch, tc.body)
				if tc.schemaDiffers != "" {
					if got == tc.decoderAccepts {
						t.Errorf("schema and decoder agree (accept=%v), but the case is excluded because %s", got, tc.schemaDiffers)
					}
					return
				}
				if got != tc.decoderAccepts {
					t.Errorf("schema accepts: %v, decoder accepts: %v", got, tc.decoderAccepts)
				}
			})
		}
	}
}

// TestSchemaExamples checks that every example in a schema passes both
// the schema and the decoder.
func TestSchemaExamples(t *testing.T) {
	decoders := map[string]func([]byte) error{
		messages.PayloadRequest:    func(b []byte) error { _, err := messages.DecodeRequest(b); return err },
		messages.PayloadCandidates: func(b []byte) error { _, err := messages.DecodeCandidates(b); return err },
		messages.PayloadResult:     func(b []byte) error { _, err := messages.DecodeResult(b); return err },
	}
	for _, name := range payloads {
		sch := compileSchema(t, name)
		doc := loadSchema(t, name)
		examples, _ := doc["examples"].([]any)
		if len(examples) == 0 {
			t.Errorf("%s schema has no examples", name)
		}
		for i, ex := range examples {
			b, err := json.Marshal(ex)
			if err != nil {
				t.Fatal(err)
			}
			if !schemaAccepts(sch, string(b)) {
				t.Errorf("%s example %d fails its schema: %s", name, i, b)
			}
			if err := decoders[name](b); err != nil {
				t.Errorf("%s example %d fails the decoder: %v", name, i, err)
			}
		}
	}
}

// TestSchemaEncodedPayloads checks that what the encoders write passes the
// schemas.
func TestSchemaEncodedPayloads(t *testing.T) {
	req, err := messages.EncodeRequest(messages.Request{RequestID: messages.NewRequestID(), Query: "q", TopK: 3})
	if err != nil {
		t.Fatal(err)
	}
	cands, err := messages.EncodeCandidates(messages.Candidates{RequestID: "r", Query: "q", TopK: 1, Candidates: []messages.Candidate{{DocID: "d", Score: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := messages.EncodeCandidates(messages.Candidates{RequestID: "r", Query: "q", TopK: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := messages.EncodeResult(messages.Result{RequestID: "r", Documents: []messages.Document{{ID: "d", Score: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		schema string
		body   []byte
	}{
		{messages.PayloadRequest, req},
		{messages.PayloadCandidates, cands},
		{messages.PayloadCandidates, empty},
		{messages.PayloadResult, res},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			if !schemaAccepts(compileSchema(t, tt.schema), string(tt.body)) {
				t.Errorf("schema rejects encoded %s", tt.body)
			}
		})
	}
}

func loadSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := messages.Schema(name)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestSchemaDocuments(t *testing.T) {
	// The document schema's agreement with its decoder,
	// corpus.ParseDocument, is checked in package corpus.
	for _, name := range append(payloads[:len(payloads):len(payloads)], messages.PayloadDocument) {
		t.Run(name, func(t *testing.T) {
			doc := loadSchema(t, name)
			if got, want := doc["$schema"], "https://json-schema.org/draft/2020-12/schema"; got != want {
				t.Errorf("$schema = %v, want %s", got, want)
			}
			if got, want := doc["$id"], "https://kretrieve.dev/schema/"+name+".schema.json"; got != want {
				t.Errorf("$id = %v, want %s", got, want)
			}
			if doc["additionalProperties"] != true {
				t.Errorf("additionalProperties = %v, want true", doc["additionalProperties"])
			}
			checkDescriptions(t, name, doc)
		})
	}
}

// checkDescriptions requires a description on every property, at any depth.
func checkDescriptions(t *testing.T, path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			for name, p := range props {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("%s.%s has no description", path, name)
				}
			}
		}
		for k, child := range v {
			if k != "examples" {
				checkDescriptions(t, path+"."+k, child)
			}
		}
	case []any:
		for _, child := range v {
			checkDescriptions(t, path, child)
		}
	}
}

// TestSchemaPatterns checks the schemas' patterns, with the Go regexp
// engine the validator uses, against the decoders' character classes
// (unicode.IsSpace and unicode.IsControl) for every rune of the Basic
// Multilingual Plane and a few beyond it.
func TestSchemaPatterns(t *testing.T) {
	props := loadSchema(t, messages.PayloadRequest)["properties"].(map[string]any)
	queryRE := regexp.MustCompile(props["query"].(map[string]any)["pattern"].(string))
	idRE := regexp.MustCompile(props["request_id"].(map[string]any)["pattern"].(string))
	for _, name := range []string{messages.PayloadCandidates, messages.PayloadResult} {
		p := loadSchema(t, name)["properties"].(map[string]any)["request_id"].(map[string]any)["pattern"].(string)
		if want := "^(" + p[1:len(p)-1] + ")?$"; want != idRE.String() {
			t.Errorf("%s request_id pattern %q differs from the request's %q beyond allowing empty", name, p, idRE)
		}
	}
	runes := []rune{0x1F600, 0xE0001, 0x10FFFF}
	for r := rune(0); r <= 0xFFFF; r++ {
		if utf8.ValidRune(r) {
			runes = append(runes, r)
		}
	}
	for _, r := range runes {
		s := string(r)
		if got, want := queryRE.MatchString(s), !unicode.IsSpace(r); got != want {
			t.Errorf("query pattern on %U: %v, want %v", r, got, want)
		}
		if got, want := idRE.MatchString("a"+s+"a"), !unicode.IsControl(r); got != want {
			t.Errorf("request_id pattern inside on %U: %v, want %v", r, got, want)
		}
		if got, want := idRE.MatchString(s), !unicode.IsControl(r) && !unicode.IsSpace(r); got != want {
			t.Errorf("request_id pattern alone on %U: %v, want %v", r, got, want)
		}
	}
}

func TestSchemaUnknown(t *testing.T) {
	for _, name := range []string{"", "requests", "request.schema.json", "../request"} {
		if b, err := messages.Schema(name); err == nil {
			t.Errorf("Schema(%q) = %d bytes, want an error", name, len(b))
		}
	}
}

func TestSchemaReturnsCopy(t *testing.T) {
	a, err := messages.Schema(messages.PayloadRequest)
	if err != nil {
		t.Fatal(err)
	}
	orig := string(a)
	clear(a)
	b, err := messages.Schema(messages.PayloadRequest)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != orig {
		t.Error("changing a returned schema changed the next one")
	}
}

// FuzzRequestSchemaAgreement looks for request bodies on which the schema
// and DecodeRequest disagree, outside the two gaps JSON Schema cannot
// close: invalid UTF-8 (replaced before the schema sees it) and queries
// over MaxQueryBytes bytes but within 4096 characters.
func FuzzRequestSchemaAgreement(f *testing.F) {
	for _, tc := range requestCases() {
		if len(tc.body) < 512 {
			f.Add([]byte(tc.body))
		}
	}
	sch := compileSchema(f, messages.PayloadRequest)
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return
		}
		_, err := messages.DecodeRequest(body)
		var ve *messages.ValidationError
		if errors.As(err, &ve) && ve.Field == "query" && strings.HasSuffix(ve.Reason, " bytes") {
			return
		}
		if got := schemaAccepts(sch, string(body)); got != (err == nil) {
			t.Fatalf("schema accepts %q: %v; decoder error: %v", body, got, err)
		}
	})
}
