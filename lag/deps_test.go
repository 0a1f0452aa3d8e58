// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheOTelAPI backs the package doc: nothing the package
// depends on is the OpenTelemetry SDK, producer/, consumers/ or pipeline/.
func TestImportsOnlyTheOTelAPI(t *testing.T) {
	depcheck.OTelAPIOnly(t, depcheck.Module+"/producer", depcheck.Module+"/consumers", depcheck.Module+"/pipeline")
}
