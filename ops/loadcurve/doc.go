// SPDX-License-Identifier: Apache-2.0

// Package loadcurve draws the latency-under-load curve of a rate sweep
// (`kretrieve load --sweep ... --curve FILE.svg`) as a standalone SVG: the
// p50, p99 and p99.9 latencies, on a logarithmic axis, against the
// achieved throughput, one polyline per percentile, with axes, ticks,
// labels, a legend and a title.
//
// The SVG is written by hand with fmt and encoding/xml's escaping: a
// plotting library (gonum.org/v1/plot) would bring fonts, image codecs and
// a dozen modules into the binary for one chart. Every drawn element
// carries a class (plot, x-tick, y-tick, series, point, legend) and the
// points carry their data (data-achieved, data-offered, data-ms), so that
// tests, and readers, can map the drawing back to the numbers.
//
// It imports only the standard library and nothing of kretrieve.
package loadcurve
