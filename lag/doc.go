// SPDX-License-Identifier: Apache-2.0

// Package lag measures how far Kafka consumer groups are behind, in records
// and in seconds, and exports it as OpenTelemetry gauges.
//
// Lag in records is a partition's end offset minus the group's committed
// offset, or minus the log start offset when nothing is committed (kadm).
// Lag in seconds is the age of the oldest unconsumed record (now minus the
// timestamp of the record at the committed offset, read with a short-lived
// direct consumer): how long the oldest waiting request has been waiting,
// whatever the throughput.
//
// Measure takes one measurement; a Monitor measures periodically and exports
// the last measurement as the gauges kretrieve.consumer.lag and
// kretrieve.consumer.lag.seconds.
//
// A [Tracker] judges the health of a lag over a sliding window of
// measurements, in Burrow's sense (OK, WARN, STALL, STOP, REWIND), with its
// velocity and time to drain; [Retentions] caches the topics' retention.ms
// for the retention headroom (how long before the oldest unconsumed record
// is due for deletion). A consumer groups' Monitor keeps a Tracker and
// exports kretrieve.consumer.lag.status, .velocity, .drain and
// kretrieve.consumer.retention.headroom besides the lag.
//
// A [Reader] reads a topic with no consumer group and keeps its own
// offsets, as a worker's index following the documents topic does:
// MeasureReader measures its lag the same way, from its offsets instead of
// a group's commits, and a Monitor made by NewReaderMonitor exports it as
// kretrieve.index.lag and kretrieve.index.lag.seconds. A Monitor's settings are a MonitorConfig;
// its meter provider and logger are Options (WithMeterProvider, WithLogger),
// defaulting to the global provider and slog.Default().
//
// The package uses the OpenTelemetry API only, never the SDK: the caller
// supplies the meter provider. It does not import producer/, consumers/ or
// pipeline/; it needs only franz-go client options.
package lag
