// SPDX-License-Identifier: Apache-2.0

// Benchratio reads the output of `go test -bench` (the file `make bench`
// saves) and prints kretrieve's performance targets, each with its bound
// and PASS or MISS: a ratio of the medians of the runs of two
// sub-benchmarks (throughput against a baseline, say), or one
// sub-benchmark's median itself (a pathway checkpoint's ns/checkpoint, or
// the allocs/op that -benchmem reports):
//
//	go run ./internal/benchratio bench.out
//
// With no file argument it reads standard input. A target whose benchmarks are
// missing from the output is reported as n/a. The exit status is 0 whether
// the targets are met or not (it is a report, not a gate), 1 when the input
// cannot be read, holds no benchmark results or records a failure (a
// "--- FAIL" or "FAIL" line, or a panic: the table is still printed), 2 on
// bad usage.
//
// It is a developer tool: it imports nothing of kretrieve and nothing imports
// it.
package main
