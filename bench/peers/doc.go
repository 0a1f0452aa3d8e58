// SPDX-License-Identifier: Apache-2.0

// Package peers runs the relay of bench/relay with the peers a user would
// pick instead of kretrieve side by side, the broker in a process of its
// own: BenchmarkPeers reports each variant's msgs/s and the CPU of the
// client process alone per record (client-cpu-µs/msg), beside the broker
// process's (broker-cpu-µs/msg).
//
// It is a module of its own (bench/peers/go.mod) so that kretrieve's
// go.mod never depends on Datadog's tracer: the dsm variant is Datadog
// Data Streams Monitoring, dd-trace-go v2's datastreams checkpoints, set
// on the relay's kgo clients as dd-trace-go's franz-go contrib sets them
// (see DSM). The contrib module itself is not in the Go module proxy, so
// DSM does its Data Streams part here with the core module's public API.
// Its agent traffic goes to an HTTP sink on 127.0.0.1 (AgentSink).
//
// Intended invocation, from this directory:
//
//	go test -run '^$' -bench '^BenchmarkPeers$' -benchtime 20000x .
//
// TestDSMCheckpoints checks that the dsm variant really checkpoints: every
// record of topic B carries the pathway header, and the Data Streams
// payloads the tracer sends hold the relay's four checkpoints, chained.
package peers
