// SPDX-License-Identifier: Apache-2.0

// Package kafkaacl is the least-privilege ACL matrix of kretrieve's roles:
// for each role (one per pipeline stage, retrieval and enrichment by
// default, then gateway, producer, dlq, lag and pathways) the topics and consumer groups it uses and the one operation it
// needs on each. The topics are the pipeline topics, their dead-letter
// topics and the pathways topic the long-running commands publish their
// pathway aggregates to (package pathwaytopic).
//
// It is the single source for the ACL table of docs/security.md ([Markdown]), for the
// development broker's --acl-roles (kretrieve broker) and for the tests that
// run every role under exactly these ACLs and check that it is refused
// outside them. [Rule.Builder] turns a rule into a kadm ACL builder for
// creating the ACLs on a real cluster.
//
// The matrix is built from a topology (package topology): adding a stage
// adds its role and the rules of the other roles on its topics.
//
// It imports messages (topic names), topology and franz-go's kmsg and
// kadm only.
package kafkaacl
