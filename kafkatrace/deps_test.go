// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheOTelAPI backs the package doc's claims: nothing the
// package depends on is the OpenTelemetry SDK, producer/ or consumers/.
func TestImportsOnlyTheOTelAPI(t *testing.T) {
	depcheck.OTelAPIOnly(t, depcheck.Module+"/producer", depcheck.Module+"/consumers")
}
