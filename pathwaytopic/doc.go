// SPDX-License-Identifier: Apache-2.0

// Package pathwaytopic carries the pathway latencies of every kretrieve
// process over Kafka, so that one command can show the whole pipeline
// across processes and machines with nothing but Kafka.
//
// Every interval (10 s by default) a [Publisher] takes the cumulative
// pathway state of its process ([kafkatrace.Metrics.Pathways]), subtracts
// the state it published last, and produces the difference as one [Window]
// record to a compacted internal topic ([DefaultTopic]). The record's key is
// the process's instance id, so compaction keeps the newest window of each
// process, and the topic's retention drops processes long gone. A last
// window is published when the process stops.
//
// A [Reader] reads the topic from its start, keeps the newest window of
// each instance (the one read last), dates each window on its own clock
// (see Reader: never by the writer's clock), marks late and final windows
// (Window.Late) and [Merge]s those that are not stale into a [View]: one
// [Row] per pathway checkpoint (checkpoint, pathway hash, parent hash),
// with its messages per second and the edge and from-origin latency
// quantiles of the merged histograms, in pathway order.
//
// # Record format
//
// A record's key is the instance id; its value is one JSON object,
// version [Version]:
//
//	{"v":1,"service":"kretrieve-retrieval","instance":"kretrieve-retrieval@host/42-9f3c",
//	 "start":"2026-01-02T15:04:05Z","end":"2026-01-02T15:04:15Z","interval_ns":10000000000,
//	 "series":[{"service":"kretrieve-retrieval","group":"retrieval","topic":"retrieval.requests",
//	   "direction":"in","hash":"…16 hex…","parent":"…16 hex…","total":1200,
//	   "edge":{"count":98,"sum_ns":4411000,"offset":-220,"buckets":[3,10,…]},
//	   "origin":{"count":98,"sum_ns":…,"offset":…,"buckets":[…]},
//	   "cohorts":{"start":1767366300,"counts":[120,98,0,7]}}]}
//
// cohorts counts the series' records by the origin time of their pathway
// (pathway.Cohorts): counts of consecutive 5 s bins from start (Unix
// seconds), cumulative since the process started, within the last 10
// minutes only. Unlike the histograms they are not the window's own, so
// that the newest window of each instance, all that compaction keeps, is
// enough to tell how many requests of each origin bin entered the
// pipeline and how many ended ([View.Cohorts]).
//
// A process whose workers keep an index that follows a topic without a
// consumer group (the documents topic, package docfeed) adds, with
// WithFeeds, where each index stands ([Feed]):
//
//	"feeds":[{"name":"retrieval","topic":"retrieval.documents","offsets":{"0":8352,"1":0},
//	  "newest":"2026-01-02T15:04:14Z","documents":8352,"ready":true}]
//
// edge and origin are the base-2 exponential histograms of package pathway
// (scale [pathway.Scale]) holding only the measurements of the window;
// total is the series' count since the process started measuring it. Every
// series of the process is in every window, those without measurements in
// the window with empty histograms, so idle pathways stay in view with
// their totals.
//
// Anyone allowed to write the topic can write anything to it, so [Decode]
// treats records as hostile: it bounds their size ([MaxRecordBytes]), their
// series ([MaxSeries]), names, counts and bucket ranges, refuses control
// and format characters (which could rewrite a terminal), and reports what
// it refused as an [*InvalidError] with a short reason that the Reader
// counts. It never panics.
//
// The package imports franz-go and, of kretrieve, only kafkaclient (topic
// creation), kafkatrace (the type of the pathway state), pathway (its
// checkpoints and histograms), messages (the default topic's name) and
// internal/termsafe (the characters a terminal must not be given); it
// does not import pipeline/, producer/ or consumers/ (a test checks it).
package pathwaytopic
