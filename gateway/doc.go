// SPDX-License-Identifier: Apache-2.0

// Package gateway is kretrieve's HTTP API in front of the pipeline:
// POST /v1/search publishes a request and waits for its outcome,
// POST /v1/requests publishes only and holds the outcome for a while,
// GET /v1/requests/{id} reads it, GET /healthz and GET /readyz report
// health and readiness. Every error, 404 and 405 included, is JSON.
//
// New builds a Gateway from its Config and a producer.Client that does the
// publishing and waiting. The gateway adds only what HTTP needs: the
// server span and trace-context handling at the edge (optionally a trust
// boundary), admission control of the requests in flight, request decoding
// with its limits, and Serve with the server's timeouts, TLS and connection
// limit.
//
// Settings are fields of Config (checked by Config.Validate); the
// collaborators, the tracer provider, meter provider, propagator and
// logger, are handed to New as Options (WithTracerProvider,
// WithMeterProvider, WithPropagator, WithLogger), each defaulting to the
// OpenTelemetry global or slog.Default().
package gateway
