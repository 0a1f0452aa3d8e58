// SPDX-License-Identifier: Apache-2.0

// Package chaos holds kretrieve's chaos test (build tag chaos, run by `make
// chaos`): real kretrieve processes (a development broker with a data
// directory, two workers per stage, a gateway) under a paced load while
// their processes are SIGKILLed and SIGTERMed, partitions are added, the
// broker is SIGKILLed and a dead-letter replay is SIGKILLed. It reports how
// many requests were sent, answered, dead-lettered, duplicated and lost, and
// fails on any loss. Its ingest phase seeds the documents topic with
// `kretrieve ingest`, has every worker follow it into an index directory of
// its own (resumed from after each restart), publishes upserts, new
// documents and tombstones through all the faults, and at the end requires
// every worker's document set (GET /v1/index: offsets, digest, count) to
// equal the topic's final state. The package has no non-test code.
package chaos
