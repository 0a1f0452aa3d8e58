// SPDX-License-Identifier: Apache-2.0

package dlq_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: every client List
// and Replay create is closed before they return.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
