// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsNothingOfKretrieve backs the package doc: a developer tool
// over the standard library. (Nothing can import it: it is a main package.)
func TestImportsNothingOfKretrieve(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "")
}
