// SPDX-License-Identifier: Apache-2.0

package dlq

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheOTelAPI backs the package doc's claims: nothing the
// package depends on is the OpenTelemetry SDK, producer/, consumers/ or
// pipeline/, and of kretrieve it imports only deadletters, kafkatrace,
// messages, otelnames and internal/global.
func TestImportsOnlyTheOTelAPI(t *testing.T) {
	depcheck.OTelAPIOnly(t, depcheck.Module+"/producer", depcheck.Module+"/consumers", depcheck.Module+"/pipeline")
	ours := depcheck.OwnImports(t, false)
	depcheck.OnlyImports(t, ours, "", depcheck.Module+"/deadletters", depcheck.Module+"/kafkatrace",
		depcheck.Module+"/messages", depcheck.Module+"/otelnames", depcheck.Module+"/internal/global")
}
