// SPDX-License-Identifier: Apache-2.0

package tlstest

import (
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestTestSupportOnly backs the package doc: production code (the binary)
// does not import it, and it imports no other kretrieve package.
func TestTestSupportOnly(t *testing.T) {
	depcheck.NotImportedBy(t, depcheck.Module+"/internal/testutil/tlstest", depcheck.Module+"/cmd/...")
	for _, imp := range depcheck.Imports(t, false) {
		if strings.HasPrefix(imp, depcheck.Module+"/") {
			t.Errorf("imports %s", imp)
		}
	}
}
