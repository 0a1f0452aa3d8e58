// Package search is kretrieve's document index: a bleve index of Documents,
// scored with BM25, that ranks documents for a query (the retrieval worker)
// and serves stored documents with highlighted snippets (the enrichment
// worker).
//
// # Building and opening
//
// Build writes an index to a directory once, in batches, and closes it;
// Open opens such a directory read-only, and several processes (or several
// Index values in one process) may have it open at once. NewMemory builds the
// same index in memory, for `kretrieve run` and tests (the tests' demo
// corpus is corpus/corpustest). An Index is immutable and safe for
// concurrent use.
//
// # Fields and queries
//
// Each Document is indexed as these bleve fields:
//
//	title        text, English analysis (stemming, stop words), stored
//	body         text, English analysis, stored, with term vectors for highlighting
//	name         identifier text derived from the id, not stored: path
//	             elements, identifiers and their camelCase parts, so that
//	             "ParseQuery" and "parse query" both match "net/url.ParseQuery"
//	kind         keyword, stored
//	import_path  keyword, stored
//	url, source  stored only
//	metadata.*   one stored-only field per metadata key
//
// The English analysis also splits words at dots, slashes and underscores,
// so "io.Reader" in a body matches "reader". Queries are plain text, never a
// query language: Search analyses them like the documents and matches any
// term in name (boosted ×3), title (×2) and body, best BM25 score first, ties
// by id. Each distinct term counts once, however often the query repeats
// it, and each field searches at most the first MaxQueryTerms distinct
// terms, so no query costs more than 4×MaxQueryTerms term clauses (a Trace
// in the context reports the plan). Highlight marks the query's terms in a
// fragment of the body with <mark>…</mark> in otherwise HTML-escaped text
// (see Highlighted). Snippet is a plain-text fallback that needs no index.
//
// The index records its name and a format version in bleve's internal
// storage; Open refuses directories not written by Build.
//
// This package depends on bleve and the standard library only. It must not
// import the Kafka, tracing or message packages: callers adapt it through
// their own small interfaces (consumers/retrieval, consumers/enrichment), and
// the corpus package turns sources into Documents.
package search
