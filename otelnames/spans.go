// SPDX-License-Identifier: Apache-2.0

package otelnames

// Operation names, the first word of the span names of one topic's records
// (see [SendSpan], [WaitSpan], [ProcessSpan], [ReplaySpan]).
const (
	// OpSend names producer spans: "send <topic>".
	OpSend = "send"
	// OpWait names queue-wait spans: "wait <topic>".
	OpWait = "wait"
	// OpProcess names consumer spans: "process <topic>".
	OpProcess = "process"
	// OpReplay names the root span of a dead-letter replay: "replay <dlq topic>".
	OpReplay = "replay"
)

// SendSpan is the name of the PRODUCER span of a record sent to topic.
func SendSpan(topic string) string { return OpSend + " " + topic }

// WaitSpan is the name of the queue-wait span of a record read from topic.
func WaitSpan(topic string) string { return OpWait + " " + topic }

// ProcessSpan is the name of the CONSUMER span of a record read from topic.
func ProcessSpan(topic string) string { return OpProcess + " " + topic }

// ReplaySpan is the name of the root span replaying a dead letter of dlqTopic.
func ReplaySpan(dlqTopic string) string { return OpReplay + " " + dlqTopic }

// Names of the spans inside the process spans and at the root.
const (
	// SpanRequest is the span at the root of every request's trace when the
	// request starts at a request client (not at an HTTP server).
	SpanRequest = "request"
	// SpanSearch is retrieval's index search.
	SpanSearch = "search"
	// SpanLoadDocuments is enrichment's loading of the candidate documents.
	SpanLoadDocuments = "load documents"
	// SpanDedupe is enrichment's dropping of duplicate documents.
	SpanDedupe = "dedupe"
	// SpanRerank is enrichment's reordering of the documents.
	SpanRerank = "rerank"
)

// EventRetry is the span event of a failed attempt that will be retried,
// with the Retry* attributes.
const EventRetry = "retry"

// EventStaleCandidates is the event on the load documents span of a
// request some of whose candidates changed between retrieval and
// enrichment, with [EnrichMissing] (left out: deleted, or not applied to
// enrichment's index yet) and [EnrichChanged] (marked stale_score); only
// over an index that knows versions.
const EventStaleCandidates = "stale candidates"

// EventClockSkew is the event on the gateway's search span of an answer
// some of whose stages reported a queue time longer than the whole
// request took on the gateway's clock (clock skew between processes): the
// times answered were cut to it; [TimingsSkewedStages] says how many.
const EventClockSkew = "clock skew"
