// SPDX-License-Identifier: Apache-2.0

// Package relay is the harness of the relay benchmarks (bench's
// BenchmarkRelay, BenchmarkRelayClient and BenchmarkRelayPaced, and the
// nested module bench/peers): a producer, a worker and a consumer around
// two topics (Relay), the instrumentations compared (Untraced, Kotel,
// Kretrieve; another module adds its own as an Instrumentation), the SDK
// providers exporting to a discarding OTLP/HTTP sink (Providers), the
// variants (Variants) and their measurement (Bench, Measure), with the
// broker in the benchmark's process or in a child process of its own
// (StartBrokerProcess, ServeBrokerIfAsked), so that the clients' CPU is
// measured apart from the broker's.
//
// It is test support: it takes a testing.TB, and no product package
// imports it (a test of bench checks that).
package relay
