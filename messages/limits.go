// SPDX-License-Identifier: Apache-2.0

package messages

// Payload names, used in errors and as names for [Schema].
const (
	PayloadRequest    = "request"
	PayloadCandidates = "candidates"
	PayloadResult     = "result"
)

// Limits shared by the payloads.
const (
	// SchemaVersion is the payload version this code writes and the highest
	// it reads. An absent or zero schema_version is read as version 1.
	// Version 2 added timings.stages (see [Timings]); readers of version 2
	// also read version 1 payloads.
	SchemaVersion = 2

	// MaxRequestIDLen is the maximum length of a request id, in characters
	// (Unicode code points).
	MaxRequestIDLen = 128

	// MaxQueryBytes is the maximum length of a query, in bytes of UTF-8.
	MaxQueryBytes = 4096

	// MinTopK and MaxTopK bound the number of documents a request may ask
	// for; DefaultTopK is used when a request does not say.
	MinTopK     = 1
	MaxTopK     = 100
	DefaultTopK = 10

	// MaxStages is the maximum number of entries in a payload's timings.
	MaxStages = 16

	// MaxStageNameBytes is the maximum length of a stage name in
	// [StageTiming], in bytes (stage names are ASCII).
	MaxStageNameBytes = 64
)
