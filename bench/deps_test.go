// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOfKretrieve backs the package doc: the benchmarks import, of
// kretrieve, only bench/relay, kafkatrace, pathway and broker/brokertest,
// and nothing in the module imports the package.
func TestImportsOfKretrieve(t *testing.T) {
	ours := depcheck.OwnImports(t, true)
	depcheck.OnlyImports(t, ours, "",
		depcheck.Module+"/bench/relay", depcheck.Module+"/kafkatrace", depcheck.Module+"/pathway",
		depcheck.Module+"/broker/brokertest",
		depcheck.Module+"/internal/testutil/depcheck") // this test
	depcheck.NotImportedBy(t, depcheck.Module+"/bench", depcheck.Module+"/...")
}
