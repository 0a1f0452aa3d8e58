// SPDX-License-Identifier: Apache-2.0

// Package corpus owns the documents kretrieve indexes and the queries it
// measures retrieval quality with.
//
// [GoStdlib] extracts the demo corpus from the Go standard library source
// of a GOROOT: one [search.Document] per package and per exported
// function, type, method, constant and variable, with pkg.go.dev links.
// Document IDs follow the scheme described on [search.Document.ID]:
// "net/url" for a package, "net/url.ParseQuery" for a package-level
// identifier and "bufio.Scanner.Scan" for a method.
//
// [ReadJSONL] and [ReadJSONLFile] read users' own documents, one JSON
// object per line, reporting each bad line as a [*LineError].
// [ParseDocument] and [EncodeDocument] are the one home of a document's
// JSON value on the documents topic (messages.DefaultDocumentsTopic): the
// format of such a line, under the same rules, within
// messages.MaxDocumentBytes.
//
// [QualitySet] returns the embedded retrieval quality set: natural-language
// queries, each with the IDs of the Go corpus documents that answer it.
//
// This package imports only the standard library,
// github.com/kretrieve/kretrieve/search (for [search.Document]) and
// github.com/kretrieve/kretrieve/messages (the documents topic's limits).
// It must not import Kafka clients, OpenTelemetry or other kretrieve
// packages.
package corpus
