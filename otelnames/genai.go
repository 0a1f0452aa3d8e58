// SPDX-License-Identifier: Apache-2.0

package otelnames

import "go.opentelemetry.io/otel/attribute"

// Semantic-convention attributes that the pinned semconv package
// (go.opentelemetry.io/otel/semconv/v1.43.0) does not define: the GenAI
// retrieval attributes moved to the separate GenAI conventions
// (github.com/open-telemetry/semantic-conventions-genai,
// docs/gen-ai/gen-ai-spans.md, "Retrievals"). kretrieve sets them on its
// search span next to its own kretrieve.* keys, so that GenAI and RAG tools
// recognise the search as a retrieval.
const (
	// GenAIOperationName is gen_ai.operation.name, always
	// [GenAIOperationRetrieval] on the search span.
	GenAIOperationName = attribute.Key("gen_ai.operation.name")
	// GenAIDataSourceID is gen_ai.data_source.id: the index searched (the
	// same value as [IndexName]).
	GenAIDataSourceID = attribute.Key("gen_ai.data_source.id")
	// GenAIRetrievalTopK is gen_ai.retrieval.top_k: the maximum number of
	// documents the search was asked for (the same value as [SearchTopK]).
	GenAIRetrievalTopK = attribute.Key("gen_ai.retrieval.top_k")
	// GenAIRetrievalDocuments is gen_ai.retrieval.documents, opt-in
	// (retrieval's Config.RecordDocuments): the documents found, best
	// first, each a map with "id" (string) and "score" (double).
	GenAIRetrievalDocuments = attribute.Key("gen_ai.retrieval.documents")
)

// GenAIOperationRetrieval is the value of [GenAIOperationName] on the search
// span: the conventions' well-known value for a retrieval operation.
const GenAIOperationRetrieval = "retrieval"

// Values of error.type on a search span that ended in an error, as the
// GenAI conventions ask (a low-cardinality error identifier).
const (
	// ErrorTypeSearchTimeout: the search overran its deadline twice.
	ErrorTypeSearchTimeout = "timeout"
	// ErrorTypeInvalidQuery: the index refused the query.
	ErrorTypeInvalidQuery = "invalid_query"
	// ErrorTypeOther: any other error (the conventions' fallback value).
	ErrorTypeOther = "_OTHER"
)

// KafkaClusterID is messaging.kafka.cluster.id, the id of the Kafka cluster
// a client is connected to, as the broker's Metadata response reports it.
// The messaging conventions' Kafka span definitions reference it
// (model/messaging/kafka.yaml in open-telemetry/semantic-conventions, on
// send, receive, settle and process spans); the pinned semconv package does
// not have it yet. It is on every span and messaging metric series of a
// kafkatrace.Tracer given the id (kafkatrace.WithKafkaClusterID).
const KafkaClusterID = attribute.Key("messaging.kafka.cluster.id")
