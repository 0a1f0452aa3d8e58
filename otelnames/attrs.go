// SPDX-License-Identifier: Apache-2.0

package otelnames

import "go.opentelemetry.io/otel/attribute"

// Request attributes, on the request span, the search span and the load
// documents span. Queries and request ids are user data: the package redact
// records them through these keys without it.
const (
	// RequestID is a request id kretrieve generated (messages.NewRequestID),
	// which carries no user data.
	RequestID = attribute.Key("kretrieve.request.id")
	// RequestIDHash is the hex xxhash64 of any other request id: one chosen
	// by an outside producer, or adopted from a record key, may be anything.
	RequestIDHash = attribute.Key("kretrieve.request.id_hash")
	// RequestTopK is the requested number of documents.
	RequestTopK = attribute.Key("kretrieve.request.top_k")
	// RequestOutcome is "completed", "failed", "timeout", "canceled" or "sent".
	RequestOutcome = attribute.Key("kretrieve.request.outcome")
	// QueryLength is the query's length in bytes.
	QueryLength = attribute.Key("kretrieve.query.length")
	// QueryHash is the hex xxhash64 of the query text.
	QueryHash = attribute.Key("kretrieve.query.hash")
	// QueryText carries the query text, only when recording it was asked
	// for (retrieval's Config.RecordQueryText).
	QueryText = attribute.Key("kretrieve.query.text")
)

// Attributes of the Kafka spans (send, wait, process). Semantic-convention
// attributes come from semconv.
const (
	// MessageKeyHash is the xxhash64 of the record key, in hex: records can
	// be correlated by key without putting the key itself into telemetry.
	MessageKeyHash = attribute.Key("kretrieve.message.key_hash")
	// QueueWaitMS is the queue wait in milliseconds (after clamping).
	QueueWaitMS = attribute.Key("kretrieve.queue_wait.ms")
	// QueueWaitTimestampType says which clock the record timestamp came
	// from: "CreateTime" (the producer's clock) or "LogAppendTime" (the
	// broker's).
	QueueWaitTimestampType = attribute.Key("kretrieve.queue_wait.timestamp_type")
	// QueueWaitOffsetLag is the partition's offset lag when the record was
	// fetched: high watermark − offset − 1.
	QueueWaitOffsetLag = attribute.Key("kretrieve.queue_wait.offset_lag")
	// QueueWaitClockSkew is true when the record timestamp lies in the
	// consumer's future, so the wait was clamped to zero.
	QueueWaitClockSkew = attribute.Key("kretrieve.queue_wait.clock_skew")
	// QueueWaitClockSkewMS is by how many milliseconds the timestamp lay in
	// the future.
	QueueWaitClockSkewMS = attribute.Key("kretrieve.queue_wait.clock_skew_ms")
	// TimingsSkewedStages is how many stages' queue times the gateway cut
	// to the request's whole duration ([EventClockSkew]).
	TimingsSkewedStages = attribute.Key("kretrieve.timings.skewed_stages")
	// TraceContextInvalid is set on a process span started as a new root
	// because the record carried a traceparent header that is not valid W3C.
	TraceContextInvalid = attribute.Key("kretrieve.trace_context.invalid")
)

// BaggagePrefix prefixes the attributes that baggage members become on
// process spans, only for the keys the operator lists: see [Baggage].
const BaggagePrefix = "kretrieve.baggage."

// Baggage returns the attribute key of the baggage member member:
// "kretrieve.baggage.tenant" for "tenant". The prefix keeps baggage from
// overwriting any other attribute.
func Baggage(member string) attribute.Key { return attribute.Key(BaggagePrefix + member) }

// Attributes of a retry event on the process span.
const (
	// RetryAttempt is the attempt that failed, from 1.
	RetryAttempt = attribute.Key("kretrieve.retry.attempt")
	// RetryError is the failed attempt's error text.
	RetryError = attribute.Key("kretrieve.retry.error")
	// RetryBackoffMS is the wait before the next attempt, in milliseconds.
	RetryBackoffMS = attribute.Key("kretrieve.retry.backoff_ms")
)

// Attributes of the replay span, from the dead letter's headers and
// position. messaging.system and messaging.destination.name (the topic the
// letter is republished to) come from semconv.
const (
	// DLQReason is the dead letter's kretrieve.dlq.reason header.
	DLQReason = attribute.Key("kretrieve.dlq.reason")
	// DLQErrorType is the dead letter's kretrieve.dlq.error_type header.
	DLQErrorType = attribute.Key("kretrieve.dlq.error_type")
	// DLQAttempts is the dead letter's kretrieve.dlq.attempts header.
	DLQAttempts = attribute.Key("kretrieve.dlq.attempts")
	// DLQTopic is the dead-letter topic the letter was read from.
	DLQTopic = attribute.Key("kretrieve.dlq.topic")
	// DLQPartition is the dead letter's partition in DLQTopic.
	DLQPartition = attribute.Key("kretrieve.dlq.partition")
	// DLQOffset is the dead letter's offset in its partition.
	DLQOffset = attribute.Key("kretrieve.dlq.offset")
)

// Attributes of the process span of a documents record (package docfeed):
// what the batch it was applied in did.
const (
	// IndexBatchRecords is the number of records in the batch.
	IndexBatchRecords = attribute.Key("kretrieve.index.batch.records")
	// IndexBatchUpserted, IndexBatchDeleted and IndexBatchUnchanged count
	// the batch's documents added or changed, deleted, and unchanged.
	IndexBatchUpserted  = attribute.Key("kretrieve.index.batch.upserted")
	IndexBatchDeleted   = attribute.Key("kretrieve.index.batch.deleted")
	IndexBatchUnchanged = attribute.Key("kretrieve.index.batch.unchanged")
	// IndexApplyMS is how long the batch took to apply, in milliseconds.
	IndexApplyMS = attribute.Key("kretrieve.index.batch.apply_ms")
)

// Attributes of the search span.
const (
	// IndexName names the index searched.
	IndexName = attribute.Key("kretrieve.index.name")
	// IndexDocuments is the number of documents in the index.
	IndexDocuments = attribute.Key("kretrieve.index.documents")
	// SearchTopK is the number of hits asked for.
	SearchTopK = attribute.Key("kretrieve.search.top_k")
	// SearchHits is the number of hits found.
	SearchHits = attribute.Key("kretrieve.search.hits")
	// SearchClauses is the number of term clauses the index searched
	// (distinct terms per field, at most 4×search.MaxQueryTerms).
	SearchClauses = attribute.Key("kretrieve.search.clauses")
	// SearchTermsDropped is the number of distinct query terms left out
	// over search.MaxQueryTerms; set only when some were.
	SearchTermsDropped = attribute.Key("kretrieve.search.terms_dropped")
)

// Attributes of the enrichment spans (load documents, dedupe, rerank).
const (
	// EnrichCandidates is the number of candidates to load.
	EnrichCandidates = attribute.Key("kretrieve.enrich.candidates")
	// EnrichLoaded is the number of documents loaded.
	EnrichLoaded = attribute.Key("kretrieve.enrich.loaded")
	// EnrichMissing is the number of candidates not in the store.
	EnrichMissing = attribute.Key("kretrieve.enrich.missing")
	// EnrichDuplicates is the number of duplicates dropped.
	EnrichDuplicates = attribute.Key("kretrieve.enrich.duplicates")
	// EnrichDocuments is the number of documents left.
	EnrichDocuments = attribute.Key("kretrieve.enrich.documents")
	// EnrichReordered is how many documents changed place in the rerank.
	EnrichReordered = attribute.Key("kretrieve.enrich.reordered")
	// EnrichChanged is the number of candidates whose document enrichment
	// loaded at another version than retrieval scored (returned, marked
	// stale_score); set only over an index that knows versions.
	EnrichChanged = attribute.Key("kretrieve.enrich.changed")
)

// Attributes of [MetricPathwayLatency].
const (
	// PathwayHash is the pathway hash up to and including the checkpoint,
	// 16 hex digits.
	PathwayHash = attribute.Key("kretrieve.pathway.hash")
	// PathwayParentHash is the hash of the pathway the record arrived on,
	// 16 zeros when it started here.
	PathwayParentHash = attribute.Key("kretrieve.pathway.parent_hash")
	// PathwayEdge is the checkpoint as an edge of the pipeline:
	// "retrieval.requests → retrieval", "retrieval → retrieval.candidates".
	PathwayEdge = attribute.Key("kretrieve.pathway.edge")
	// PathwayDirection is "in" (a consumer starts processing) or "out" (a
	// producer hands the record over).
	PathwayDirection = attribute.Key("kretrieve.pathway.direction")
	// PathwayMeasure is [MeasureEdge] or [MeasureOrigin].
	PathwayMeasure = attribute.Key("kretrieve.pathway.measure")
)

// Values of PathwayMeasure.
const (
	// MeasureEdge is the latency from the previous checkpoint to this one.
	MeasureEdge = "edge"
	// MeasureOrigin is the latency from the pathway's first checkpoint.
	MeasureOrigin = "origin"
)

// DroppedReason is the attribute of [MetricResultsDropped]: "duplicate",
// "late", "foreign" or "undecodable".
const DroppedReason = attribute.Key("reason")

// Attributes of deadlines (messages.HeaderDeadline).
const (
	// DeadlineExpired is true on the process span of a record taken past
	// its caller's deadline: the handler did not run and nothing was
	// produced (the outcome "expired").
	DeadlineExpired = attribute.Key("kretrieve.deadline.expired")
	// DeadlineLateMS is how long after its deadline such a record was
	// taken, in milliseconds, on the worker's clock.
	DeadlineLateMS = attribute.Key("kretrieve.deadline.late_ms")
	// Degraded names what a stage left out of its output under deadline
	// pressure ("snippets"); set on the stage's span when it did.
	Degraded = attribute.Key("kretrieve.degraded")
)

// RefusedReason is the attribute of [MetricGatewayRefused] for refusals
// beyond the in-flight limit: "queue_wait" when the first stage's queue
// wait exceeded the request's budget. Refusals at the in-flight limit
// carry none.
const RefusedReason = attribute.Key("kretrieve.gateway.refused.reason")
