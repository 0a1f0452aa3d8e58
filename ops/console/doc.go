// SPDX-License-Identifier: Apache-2.0

// Package console is kretrieve's web console: one http.Handler that serves
// the embedded browser UI (assets/, built into the binary with go:embed,
// nothing fetched at run time) and the JSON API it reads: the pipeline map
// (stages from the topology, edges with the pathway aggregates' throughput
// and latencies, consumer lag, dead letters), searches, traces, the slowest
// requests and the dead letters, which it replays only when allowed. It
// looks a trace up in package spans' sources, in order: the process's
// spans.Store (WithSpanStore), the traces of the run (WithTraces) and
// Jaeger (Config.JaegerURL).
//
// The console is read-only by default and costs the pipeline nothing while
// no browser asks: it creates no Kafka client, starts no goroutine and keeps
// no span until the first API request, and closes all of that again after
// Config.Idle without one (an open event stream counts as a request). Every
// response carries a strict Content-Security-Policy and no inline script;
// every JSON body is written by encoding/json, which escapes <, > and & in
// strings, so text from records (queries, snippets, dead-letter reasons and
// headers) reaches the browser only as data.
//
// The API is the one of the console contract: /api/map, /api/events,
// /api/search, /api/traces/{id}, /api/slowest, /api/deadletters and
// /api/deadletters/replay, under / or Prefix.
package console
