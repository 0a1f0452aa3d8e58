// SPDX-License-Identifier: Apache-2.0

package search

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyBleve backs the package doc: bleve and the standard
// library only; no Kafka, tracing or message package.
func TestImportsOnlyBleve(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "", "github.com/blevesearch/")
}
