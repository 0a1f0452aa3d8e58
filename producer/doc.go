// Package producer is kretrieve's request client: it publishes retrieval
// requests and awaits their outcomes. It holds no server; the HTTP API in
// front of it is package gateway.
//
// Client is the entry point. Client.Start publishes a request under its own
// root span (or annotates the caller's local span, such as an HTTP server
// span) and returns a Call: Call.Acked waits for the broker's
// acknowledgement, Call.Wait for the outcome. Under it, Publisher encodes and
// produces requests (the send spans come from the kafkatrace hooks installed
// on its Kafka client), and Collector consumes the results topic and the
// dead-letter topics inside the consumer runtime's consumers.Trace
// middleware, so with the same wait and process spans as the workers, and
// hands each request's first outcome to whoever waits for it, counting
// duplicates. The Client owns both: Close flushes the Publisher and stops the
// Collector.
//
// Required inputs are NewClient's and NewCollector's arguments; their
// collaborators are Options: WithTracerProvider (the Client's request
// spans, default the global provider) and WithLogger (the Collector's,
// default slog.Default()).
//
// It uses the OpenTelemetry API only, never the SDK.
package producer
