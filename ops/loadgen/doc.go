// SPDX-License-Identifier: Apache-2.0

// Package loadgen drives a kretrieve pipeline with requests, through Kafka
// (a producer.Client) or through the HTTP gateway, open loop at a rate,
// closed loop at a number in flight, or a sweep of rates, and reports
// throughput and latency: end to end and per stage (HDR histograms), errors
// by outcome and HTTP status, duplicates and peak consumer lag.
//
// It is the engine of `kretrieve load`; the command parses the flags,
// starts the telemetry, and prints the Report (its JSON keys are the
// command's --json output).
package loadgen
