// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheOTelAPI backs the package doc's claims: nothing the
// package depends on is the OpenTelemetry SDK, and besides the standard
// library it imports only the OpenTelemetry API and franz-go's kgo (for
// HeaderCarrier's record), no kretrieve package.
func TestImportsOnlyTheOTelAPI(t *testing.T) {
	depcheck.OTelAPIOnly(t)
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "",
		"go.opentelemetry.io/otel/", "github.com/twmb/franz-go/pkg/kgo")
}
