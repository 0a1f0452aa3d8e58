// SPDX-License-Identifier: Apache-2.0

package servertls

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheStandardLibrary backs the package doc.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "")
}
