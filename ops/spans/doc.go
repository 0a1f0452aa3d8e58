// SPDX-License-Identifier: Apache-2.0

// Package spans holds the operator's wing's span record and where spans come
// from.
//
// Span is kretrieve's backend-neutral record of a finished span, and Trace
// one request's spans. The places spans come from are Sources, asked for
// one trace by its id:
//   - Store, the in-process SDK store: a span processor that keeps the
//     process's recent traces while it is on (the console turns it on);
//   - Traces, traces already in memory, such as a spans file's (ReadSpans
//     and GroupTraces; WriteSpans writes one) or the slowest requests a
//     run summary kept;
//   - Jaeger, the client of a Jaeger query API.
//
// WriteWaterfall draws a trace in the terminal, for the trace command and
// the run summary, escaping control and format characters and bounded in
// width and lines whatever the trace holds; Tree orders a trace's spans the way it draws them, for
// any other view.
//
// It imports the OpenTelemetry SDK (Store is a span processor, FromReadOnly
// converts its spans) and, of kretrieve, only otelnames' span names and
// internal/termsafe, which escapes what the waterfall prints.
package spans
