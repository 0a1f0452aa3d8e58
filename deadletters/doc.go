// SPDX-License-Identifier: Apache-2.0

// Package deadletters owns kretrieve's dead-letter record, the record a
// consumer writes to <topic>.dlq (see messages.DLQTopic) for a record it
// gives up on.
//
// A dead letter is the original record (key, value, headers) plus the
// kretrieve.dlq.* headers (named by the Header constants): why it failed
// ([Failure], [ErrorTypePermanent] or [ErrorTypeTransient]), where it came
// from and after how many attempts. [Build] makes one, as the consumers'
// runtime does, cut to a size limit when the original is too large
// ([BuildMinimal] keeps only the headers); [FromRecord] parses one into a
// [Letter], tolerating missing or garbled headers, and [Letter.Target]
// names the topic a replay republishes it to.
//
// Reading and replaying dead-letter topics is the operator's business:
// package ops/dlq lists and replays them (`kretrieve dlq list|replay` and
// the console).
//
// The package uses the OpenTelemetry API only, never the SDK (a test checks
// it with go list). Of kretrieve it imports only messages and
// tracecontext; it imports neither kafkatrace nor franz-go's kadm, and
// does not import producer/, consumers/, pipeline/ or ops/.
package deadletters
