// SPDX-License-Identifier: Apache-2.0

package deadletters_test

import (
	"github.com/kretrieve/kretrieve/messages"
)

// Topics of the tests.
const (
	requests      = messages.DefaultRequestsTopic
	requestsDLQ   = requests + messages.DLQSuffix
	candidates    = messages.DefaultCandidatesTopic
	candidatesDLQ = candidates + messages.DLQSuffix
)
