// SPDX-License-Identifier: Apache-2.0

package k8s

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOfTheModule backs the package doc: of the module, the tests
// import only pipeline, messages, pathwaytopic and configdoc.
func TestImportsOfTheModule(t *testing.T) {
	ours := depcheck.OwnImports(t, true)
	depcheck.OnlyImports(t, ours, "", depcheck.Module+"/pipeline", depcheck.Module+"/messages",
		depcheck.Module+"/pathwaytopic", depcheck.Module+"/internal/testutil/configdoc",
		depcheck.Module+"/internal/testutil/depcheck")
}
