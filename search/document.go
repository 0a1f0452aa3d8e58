// SPDX-License-Identifier: Apache-2.0

package search

// Document is one searchable document.
type Document struct {
	// ID is unique within an index. For the Go corpus: the import path for a
	// package ("net/url"), "importpath.Name" for a package-level identifier
	// ("net/url.ParseQuery") and "importpath.Type.Method" for a method
	// ("bufio.Scanner.Scan").
	ID string `json:"id"`
	// Title is shown in results; for the Go corpus it equals ID.
	Title string `json:"title"`
	// Body is the searchable text (for the Go corpus: the doc comment).
	Body string `json:"body"`
	// Kind is "package", "func", "type", "method", "const" or "var" for the
	// Go corpus; free-form (often empty) for users' documents.
	Kind string `json:"kind,omitempty"`
	// ImportPath is the Go package's import path (Go corpus only).
	ImportPath string `json:"import_path,omitempty"`
	// URL links to the document (pkg.go.dev for the Go corpus).
	URL string `json:"url,omitempty"`
	// Source names the corpus the document came from ("go-stdlib", "jsonl").
	Source string `json:"source,omitempty"`
	// Metadata holds users' extra fields, as strings.
	Metadata map[string]string `json:"metadata,omitempty"`
}
