// Package producer publishes retrieval requests and collects their outcomes.
//
// Publisher encodes and produces requests (the send spans come from the
// kafkatrace hooks installed on the client). Collector consumes the results
// topic and the dead-letter topics inside the consumer runtime's
// consumers.Trace middleware, so with the same wait and process spans as the
// workers, and hands each request's outcome to whoever waits for it,
// dropping duplicates. Client ties both together under one root span per
// request.
//
// It uses the OpenTelemetry API only, never the SDK.
package producer
