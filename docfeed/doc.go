// SPDX-License-Identifier: Apache-2.0

// Package docfeed applies the documents topic to a worker's own index: the
// GlobalKTable pattern of Kafka Streams, where every instance reads every
// partition of a compacted topic, with no consumer group, into local state.
//
// A Follower owns a live search index. It starts from the position the
// index records (search.Index.Position) or, when that position is older
// than a partition's log start (records deleted by retention or
// DeleteRecords, tombstones included) or past its end (the topic was
// recreated), from an empty index and the start of every partition, so a
// deleted document never comes back. It catches up to the end offsets it
// saw when it started, and is not Ready until then (Ready says how far
// behind it is); then it follows the topic live. New partitions are
// followed from their start.
//
// Records are applied in batches, in offset order within each partition,
// each batch atomically with the position it reaches: a worker SIGKILLed
// mid-apply resumes from its last batch, applying again what came after it
// (an upsert or delete applied twice is applied once). A record that is not
// a document (package corpus's rules: corpus.ParseDocument) or whose key
// is not its id goes to the documents topic's dead-letter topic with the
// reason, and applying continues: one poison record never stalls the
// others.
//
// Every record applied is a pathway checkpoint and, when sampled, a
// "process <topic>" span in the document's trace, taken once the record's
// batch is searchable: its "wait <topic>" span and its pathway edge from
// the publisher run from publication to searchable, for 100% of documents
// at every worker, whatever the sampling. The checkpoint's consumer group is
// the Follower's Name (the stage whose index it is), as no Kafka consumer
// group is involved.
package docfeed
