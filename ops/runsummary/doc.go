// SPDX-License-Identifier: Apache-2.0

// Package runsummary turns the spans a kretrieve run records into its summary:
// end-to-end latency from the root request spans and, per topic, the
// queue-wait and process latency from the wait and process spans.
//
// Recorder is an OpenTelemetry SDK SpanProcessor: it keeps HDR histograms,
// and the spans of only the slowest completed requests, so its memory stays
// bounded however long the run. Summary.WriteText ends with the waterfall of
// the slowest request. The span record, the spans file its kept requests are
// written to and the waterfall are package spans'.
//
// It imports the OpenTelemetry SDK (it is a span processor) and, of
// kretrieve, only otelnames' span names and ops/spans; commands pass it the
// root span's name and outcome attribute.
package runsummary
