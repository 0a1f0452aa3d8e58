// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlySearch backs the package doc: the standard library and
// packages search and messages only.
func TestImportsOnlySearch(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "", depcheck.Module+"/search", depcheck.Module+"/messages")
}
