// SPDX-License-Identifier: Apache-2.0

// Package topology declares the pipeline's shape as data: an ordered list
// of stages, each a consumer group that reads one topic and writes the
// next. The first stage reads the requests topic that producers write to;
// the last writes the results topic that the request client reads.
//
// Everything that depends on the shape iterates a [Topology] instead of
// naming stages: the workers and their commands, the ACL roles
// (kafkaacl), the result collector, lag, run summaries, load reports and
// the deployment tests. Package pipeline pairs each stage with its handler.
//
// topology is plain data: it imports only the standard library and
// package messages (for Kafka's topic-name rules).
package topology
