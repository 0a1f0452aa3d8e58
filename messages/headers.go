package messages

// Header names set on records written to a dead-letter topic. Values are
// UTF-8 strings; numbers are written in decimal.
const (
	// HeaderDLQReason holds the human-readable error text.
	HeaderDLQReason = "kretrieve.dlq.reason"
	// HeaderDLQErrorType holds [ErrorTypePermanent] or [ErrorTypeTransient].
	HeaderDLQErrorType = "kretrieve.dlq.error_type"
	// HeaderDLQOriginalTopic holds the topic the record was read from.
	HeaderDLQOriginalTopic = "kretrieve.dlq.original_topic"
	// HeaderDLQOriginalPartition holds the partition the record was read from.
	HeaderDLQOriginalPartition = "kretrieve.dlq.original_partition"
	// HeaderDLQOriginalOffset holds the offset of the original record.
	HeaderDLQOriginalOffset = "kretrieve.dlq.original_offset"
	// HeaderDLQOriginalTimestamp holds the original record's timestamp,
	// formatted with time.RFC3339Nano in UTC.
	HeaderDLQOriginalTimestamp = "kretrieve.dlq.original_timestamp"
	// HeaderDLQAttempts holds how many times the record was processed.
	HeaderDLQAttempts = "kretrieve.dlq.attempts"
	// HeaderDLQConsumerGroup holds the group of the consumer that gave up.
	HeaderDLQConsumerGroup = "kretrieve.dlq.consumer_group"
	// HeaderDLQTruncated is present only on a dead letter that could not
	// carry the whole original record (it would have exceeded the broker's
	// message size): it says what was kept of the original key (bytes),
	// headers (count) and value (bytes), as "key=K/K0 headers=H/H0
	// value=V/V0", kept over original. Such a letter cannot be replayed
	// as it is.
	HeaderDLQTruncated = "kretrieve.dlq.truncated"
)

// Values of the [HeaderDLQErrorType] header.
const (
	// ErrorTypePermanent marks a record that can never succeed, such as one
	// that fails to decode or validate.
	ErrorTypePermanent = "permanent"
	// ErrorTypeTransient marks a record that failed on retryable errors
	// until its attempts ran out.
	ErrorTypeTransient = "transient"
)
