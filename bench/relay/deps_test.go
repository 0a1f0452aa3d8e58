// SPDX-License-Identifier: Apache-2.0

package relay

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOfKretrieve backs the package doc: the harness imports, of
// kretrieve, only what it instruments and measures with (kafkatrace,
// tracing, internal/otlpwire), the broker it runs (broker,
// broker/brokertest), internal/testutil/syncbuf and the OTLP sink of
// internal/testutil/otlptest (its tests also
// internal/testutil/poll), and no package of the
// module imports it: only the benchmarks' tests do (bench) and the nested
// module bench/peers.
func TestImportsOfKretrieve(t *testing.T) {
	ours := depcheck.OwnImports(t, true)
	depcheck.OnlyImports(t, ours, "",
		depcheck.Module+"/kafkatrace", depcheck.Module+"/tracing", depcheck.Module+"/internal/otlpwire",
		depcheck.Module+"/broker", depcheck.Module+"/broker/brokertest",
		depcheck.Module+"/internal/testutil/syncbuf", depcheck.Module+"/internal/testutil/otlptest",
		depcheck.Module+"/internal/testutil/poll",     // the tests
		depcheck.Module+"/internal/testutil/depcheck") // this test
	depcheck.NotImportedBy(t, depcheck.Module+"/bench/relay", depcheck.Module+"/...")
}
