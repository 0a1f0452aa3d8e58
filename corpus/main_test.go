// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaks goroutines (GoStdlib's workers).
// Goroutines already running when the tests start, such as those the
// search package's dependencies start in init, are not leaks.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
