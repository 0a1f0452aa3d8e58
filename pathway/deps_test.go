// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheOTelAPI backs the package doc's claim: nothing the
// package depends on is the OpenTelemetry SDK (or a Kafka client).
func TestImportsOnlyTheOTelAPI(t *testing.T) {
	depcheck.OTelAPIOnly(t, "github.com/twmb/franz-go")
}
