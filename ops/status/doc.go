// SPDX-License-Identifier: Apache-2.0

// Package status computes the pipeline's live status from the state of
// Kafka, once, for every view of it: `kretrieve pathways` prints it and the
// console's map (GET /api/map) draws it. The renderers format a [Status];
// they compute nothing.
//
// A [Source] reads, on every [Source.Read]:
//   - the pathway windows the processes publish to the pathways topic
//     (package pathwaytopic): the rate and the edge and from-origin latency
//     of every pathway checkpoint, of every edge and of every stage;
//   - the lag of the configured consumer groups (package lag), in records
//     and in seconds, and its health (LagHealth) judged over the reads of
//     the last Config.LagWindow (lag.Tracker), with the retention headroom
//     from the topics' retention.ms (lag.Retentions, cached);
//   - the dead-letter topics (listed by package ops/dlq): how many letters
//     each holds, and their most frequent reasons;
//   - the indexes that follow the documents topic (package docfeed), from
//     the feeds the processes put in their windows: each index's rate and
//     freshness (the edge latency of its apply checkpoint: publication to
//     searchable) and, per worker, its position, its documents and its lag
//     in records and seconds, measured at each Read from where the worker
//     said it stood (lag.MeasureReaders, one measurement for all).
//
// The shape comes from the topology: a [Stage] per stage, and an [Edge] per
// pipeline topic, from the origin (the producers) through every stage to
// the results (the request clients).
//
// # Unknown
//
// A number that could not be measured is unknown, never 0 or -1: it is a
// [Maybe] whose Known is false, encoded in JSON as null and printed as
// [Unknown]. In particular:
//   - a lag in records is unknown when the group has no entry for the
//     topic's partitions (nothing committed nor assigned, the group does not
//     exist, or its lag was not measured) or when one partition's offsets
//     could not be read; the results topic, which no stage consumes, has no
//     lag;
//   - a lag in seconds is unknown when the lag in records is, or when the
//     oldest unconsumed record of one lagging partition could not be read;
//     it is 0 when the group is not behind;
//   - a latency quantile is unknown when no record was measured at that
//     checkpoint in the windows read;
//   - a dead-letter count is unknown when one partition's offsets of the
//     dead-letter topic could not be listed.
//
// A rate is always known: it is 0 when no record was measured.
//
// # Dead letters
//
// The dead letters that count are those of the dead-letter topics of the
// stages' inputs (messages.DLQTopic of each topology stage's Input): a
// stage dead-letters the records of the topic it consumes, so these are the
// only dead-letter topics the pipeline writes. The results topic is
// consumed by no stage: its dead-letter topic does not count, and its edge
// has no dead letters. A count is the records the topic holds (end minus
// start offsets, in its retention); the reasons, read only when
// Config.Reasons allows (reading letters needs more than counting them),
// are counted over at most MaxReasonLetters letters, read again only when
// the topic's end moved.
package status
