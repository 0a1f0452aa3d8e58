// SPDX-License-Identifier: Apache-2.0

// Package pathway carries a compact, sampling-independent "pathway
// context" on every Kafka record and measures every hop of every record
// with it.
//
// A pathway is the sequence of checkpoints a record and its descendants
// pass: a producer writing a topic (direction out), a consumer group
// reading it (direction in), and so on to the final consumer. Each record
// carries one header, [HeaderKey], of [Size] bytes:
//
//	version (1) | pathway hash (8) | origin time (8) | previous checkpoint time (8)
//
// The hash is chained: a checkpoint's hash is [Chain] of its parent's hash
// and the checkpoint's own identity ([Checkpoint.ID]: service, consumer
// group, topic, direction), so two records have the same hash exactly when
// they passed the same checkpoints in the same order. The times are Unix
// nanoseconds. The header holds no user data: no key, no value, no
// request id.
//
// Every checkpoint measures two latencies for 100% of records, whatever
// the trace sampling: the edge latency (previous checkpoint to this one)
// and the latency from origin (the first checkpoint to this one). They are
// recorded in [Histogram]s: base-2 exponential histograms updated with
// atomic operations, which export as OpenTelemetry exponential histograms
// and keep exemplars of sampled records.
//
// A header that is not exactly one well-formed header of this version,
// with times in a plausible range ([Decode]), is ignored: the record is
// processed as any other and its pathway starts afresh at the checkpoint
// that saw it, as it does for records from producers that know nothing of
// pathways.
//
// The package imports the OpenTelemetry API only (for exemplars' trace and
// span ids), never the SDK.
package pathway
