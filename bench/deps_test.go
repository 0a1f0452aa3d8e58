// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOfKretrieve backs the package doc: the benchmarks import, of
// kretrieve, only bench/relay, kafkatrace, pathway and broker/brokertest,
// and nothing in the module imports the package.
func TestImportsOfKretrieve(t *testing.T) {
	var ours []string
	for _, imp := range depcheck.Imports(t, true) {
		if strings.HasPrefix(imp, depcheck.Module+"/") {
			ours = append(ours, imp)
		}
	}
	depcheck.OnlyImports(t, ours, "",
		depcheck.Module+"/bench/relay", depcheck.Module+"/kafkatrace", depcheck.Module+"/pathway",
		depcheck.Module+"/broker/brokertest",
		depcheck.Module+"/internal/testutil/depcheck") // this test
	depcheck.NotImportedBy(t, depcheck.Module+"/bench", depcheck.Module+"/...")
}
