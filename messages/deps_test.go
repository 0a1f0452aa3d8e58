// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheStandardLibrary backs the package doc: every other
// kretrieve package may import messages, so it imports none of them, nor
// franz-go or OpenTelemetry.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "")
}
