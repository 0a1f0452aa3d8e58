// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"embed"
	"fmt"
)

//go:embed schema/*.json
var schemaFS embed.FS

// SchemaBaseURL prefixes the $id of every embedded schema: the request
// schema is SchemaBaseURL + "request.schema.json".
const SchemaBaseURL = "https://kretrieve.dev/schema/"

// Schema returns the JSON Schema (draft 2020-12) document for a payload:
// name is [PayloadRequest], [PayloadCandidates], [PayloadResult] or
// [PayloadDocument] (a record value of the documents topic). The
// document's $id is [SchemaBaseURL] + name + ".schema.json". Each call
// returns a new copy.
//
// The schemas describe the payloads as closely as JSON Schema allows. A
// few rules are checked only by the decoders: strings must be valid UTF-8
// (a validator sees them after a JSON parser has replaced invalid bytes), a
// query and a document id are limited in bytes (the schema's maxLength
// counts characters, so it is only an upper bound), a document value is
// limited to [MaxDocumentBytes], and a candidates payload may not hold more
// candidates than its top_k. The document's decoder is
// corpus.ParseDocument.
func Schema(name string) ([]byte, error) {
	switch name {
	case PayloadRequest, PayloadCandidates, PayloadResult, PayloadDocument:
		return schemaFS.ReadFile("schema/" + name + ".schema.json")
	}
	return nil, fmt.Errorf("schema: unknown payload %q", name)
}
