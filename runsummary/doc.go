// Package runsummary turns the spans a kretrieve run records into its summary:
// end-to-end latency from the root request spans and, per topic, the
// queue-wait and process latency from the wait and process spans.
//
// Recorder is an OpenTelemetry SDK SpanProcessor: it keeps HDR histograms,
// not spans, so its memory stays bounded however long the run.
package runsummary
