// SPDX-License-Identifier: Apache-2.0

// Package producer is kretrieve's request client: it publishes retrieval
// requests and awaits their outcomes. It holds no server; the HTTP API in
// front of it is package gateway.
//
// Client is the entry point. Client.Start publishes a request under its own
// root span (or annotates the caller's local span, such as an HTTP server
// span) and returns a Call: Call.Acked waits for the broker's
// acknowledgement, Call.Wait for the outcome. A Client composes two parts:
// a Publisher, which encodes and produces requests (the send spans come
// from the kafkatrace hooks installed on its Kafka client), and a
// results.Collector, which consumes the results and dead-letter topics and
// hands each request's first outcome to the call that claimed it. The
// Client owns both: Close flushes the Publisher and stops the Collector.
//
// Required inputs are NewClient's arguments; its one collaborator is an
// Option, WithTracerProvider (the request spans; default the global
// provider).
//
// It uses the OpenTelemetry API only, never the SDK.
package producer
