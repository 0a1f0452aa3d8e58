// SPDX-License-Identifier: Apache-2.0

package deadletters

// HeaderPrefix starts the name of every header Build adds to a dead letter.
const HeaderPrefix = "kretrieve.dlq."

// Header names set on records written to a dead-letter topic (by Build).
// Values are UTF-8 strings; numbers are written in decimal.
const (
	// HeaderReason holds the human-readable error text.
	HeaderReason = "kretrieve.dlq.reason"
	// HeaderErrorType holds [ErrorTypePermanent] or [ErrorTypeTransient].
	HeaderErrorType = "kretrieve.dlq.error_type"
	// HeaderOriginalTopic holds the topic the record was read from.
	HeaderOriginalTopic = "kretrieve.dlq.original_topic"
	// HeaderOriginalPartition holds the partition the record was read from.
	HeaderOriginalPartition = "kretrieve.dlq.original_partition"
	// HeaderOriginalOffset holds the offset of the original record.
	HeaderOriginalOffset = "kretrieve.dlq.original_offset"
	// HeaderOriginalTimestamp holds the original record's timestamp,
	// formatted with time.RFC3339Nano in UTC.
	HeaderOriginalTimestamp = "kretrieve.dlq.original_timestamp"
	// HeaderAttempts holds how many times the record was processed.
	HeaderAttempts = "kretrieve.dlq.attempts"
	// HeaderConsumerGroup holds the group of the consumer that gave up.
	HeaderConsumerGroup = "kretrieve.dlq.consumer_group"
	// HeaderTruncated is present only on a dead letter that could not
	// carry the whole original record (it would have exceeded the broker's
	// message size): it says what was kept of the original key (bytes),
	// headers (count) and value (bytes), as "key=K/K0 headers=H/H0
	// value=V/V0", kept over original. Such a letter cannot be replayed
	// as it is.
	HeaderTruncated = "kretrieve.dlq.truncated"
)

// Values of the [HeaderErrorType] header.
const (
	// ErrorTypePermanent marks a record that can never succeed, such as one
	// that fails to decode or validate.
	ErrorTypePermanent = "permanent"
	// ErrorTypeTransient marks a record that failed on retryable errors
	// until its attempts ran out.
	ErrorTypeTransient = "transient"
)
