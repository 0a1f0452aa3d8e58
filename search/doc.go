// SPDX-License-Identifier: Apache-2.0

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
// corpus is corpus/corpustest). Create makes an empty on-disk index and
// OpenWritable opens a Build or Create directory, holding its lock
// exclusively, to change it. An Index is safe for concurrent use.
//
// # The live index
//
// Apply upserts and deletes documents (Change) in the order given, while
// searches go on, and records the index's Position in the documents topic:
// per partition, the next offset to apply. Build and NewMemory stamp the
// index WithPosition. Each document stores its version, Document.Hash, which
// Version reads; an upsert of the version already held is not re-indexed,
// and a delete of an absent id does nothing. The index keeps the Digest of
// its (id, version) pairs, so that its document set can be compared with
// another's.
//
// Apply is atomic: the documents it changes, the new Position and the new
// Digest go into one bleve batch, which searches see all at once and which
// a crash leaves whole or absent; an index opened again reports the
// Position and Digest it was left at. A Highlight racing an Apply returns
// each document at one version, its snippet from that version's body.
//
// The package context is kept right whatever the order documents arrive
// in. A document's context field holds the first sentence of its package
// document: the document with Kind "package" whose ID is the document's
// ImportPath. Upserting a document looks its package document up among the
// same Apply's changes, then in the index; upserting or deleting a package
// document whose first sentence changes re-indexes the other documents of
// its import path. So after any sequence of Apply calls the index searches
// as NewMemory of the final documents would (scores equal once the
// segments are merged: BM25's average field length counts terms per
// segment).
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
// The index records its name, a format version, its Position and its
// Digest in bleve's internal storage; Open refuses directories not written
// by Build or Create, and format 1 indexes (written before documents had
// versions), which must be rebuilt.
//
// This package depends on bleve and the standard library only. It must not
// import the Kafka, tracing or message packages: callers adapt it through
// their own small interfaces (consumers/retrieval, consumers/enrichment), and
// the corpus package turns sources into Documents.
package search
