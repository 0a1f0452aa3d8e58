// SPDX-License-Identifier: Apache-2.0

package corpustest

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestNotInTheBinary backs the package doc: a test helper that nothing in
// the binary imports.
func TestNotInTheBinary(t *testing.T) {
	depcheck.NotImportedBy(t, depcheck.Module+"/corpus/corpustest", depcheck.Module+"/cmd/...")
}
