// SPDX-License-Identifier: Apache-2.0

package search

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that closed indexes leave no goroutines behind. bleve's
// analysis workers, started when the package is initialised, are ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
