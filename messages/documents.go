// SPDX-License-Identifier: Apache-2.0

package messages

// The documents topic: the compacted topic every worker's index follows
// (retrieval.documents by default). A record's key is the document id and
// its value the document as one JSON object, the format of a line of
// `kretrieve index --jsonl` (schema/document.schema.json; package corpus
// reads it); a record with no value (a tombstone) deletes the document.
const (
	// DefaultDocumentsTopic is the documents topic's default name.
	DefaultDocumentsTopic = "retrieval.documents"

	// PayloadDocument names the document payload in errors and [Schema].
	PayloadDocument = "document"

	// MaxDocumentBytes is the largest document value a worker applies,
	// in bytes: Kafka's default largest record batch (message.max.bytes,
	// 1 MiB) less room for the key, headers and batch overhead. A larger
	// one is dead-lettered to the documents topic's dead-letter topic.
	MaxDocumentBytes = 1000 << 10

	// MaxDocumentIDBytes is the longest document id (the record key).
	MaxDocumentIDBytes = 512

	// HeaderDocumentHash carries the content hash of a document record's
	// value (search.Document.Hash), written by `kretrieve ingest` so that
	// re-ingesting an unchanged document publishes nothing. Workers do
	// not trust it: they hash what they apply.
	HeaderDocumentHash = "kretrieve-document-hash"
)
