// Package runsummary turns the spans a kretrieve run records into its summary:
// end-to-end latency from the root request spans and, per topic, the
// queue-wait and process latency from the wait and process spans.
//
// Recorder is an OpenTelemetry SDK SpanProcessor: it keeps HDR histograms,
// and the spans of only the slowest completed requests, so its memory stays
// bounded however long the run. Span is kretrieve's record of a finished
// span: the JSON form written and read as a spans file (WriteSpans,
// ReadSpans), what WriteWaterfall draws in the terminal, and what the
// package conformance checks (it converts Jaeger's traces to it).
//
// It imports the OpenTelemetry SDK (it is a span processor) and, of
// kretrieve, only otelnames's span names; commands pass it the root span's
// name and outcome attribute.
package runsummary
