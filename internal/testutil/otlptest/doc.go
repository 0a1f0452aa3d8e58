// SPDX-License-Identifier: Apache-2.0

// Package otlptest provides an in-process OTLP/HTTP collector for tests.
//
// [NewServer] starts a [net/http/httptest] server on 127.0.0.1 that accepts
// OTLP/HTTP protobuf exports on /v1/traces, /v1/metrics and /v1/logs (optionally gzip
// compressed), decodes them with go.opentelemetry.io/proto/otlp and keeps
// the spans, the log records ([Server.Logs]), the metric names, the data points of exponential histograms
// ([Server.ExponentialHistogramPoints]) and the raw request bodies for
// assertions.
// Point an exporter at it with OTEL_EXPORTER_OTLP_ENDPOINT=[Server.Endpoint].
//
// The package is test support only: production code must not import it. It
// imports no other kretrieve package, so any package's tests may use it.
// OTLP/JSON (http/json) requests are rejected with 415 Unsupported Media Type.
package otlptest
