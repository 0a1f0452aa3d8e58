// SPDX-License-Identifier: Apache-2.0

// Package rerank is the pure ranking logic applied to retrieval candidates:
// Dedupe and DedupeMap drop near-duplicate documents (same kind and
// identifier, bodies of nearly the same words), and Rerank orders the rest by
// BM25 combined with boosts for documents the query names.
//
// It is plain computation over search documents, with no Kafka client and no
// OpenTelemetry, so offline tools (evaluation) use it without pulling in the
// pipeline's runtime; the enrichment worker calls it inside its spans.
package rerank
