// SPDX-License-Identifier: Apache-2.0

package deadletters

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTheRecordsPackages backs the package doc's claims: nothing
// the package depends on is the OpenTelemetry SDK, kafkatrace, franz-go's
// kadm, producer/, consumers/, pipeline/ or ops/; besides the standard
// library it imports only messages, tracecontext, franz-go's kgo and the
// OpenTelemetry API.
func TestImportsOnlyTheRecordsPackages(t *testing.T) {
	depcheck.OTelAPIOnly(t, depcheck.Module+"/kafkatrace", "github.com/twmb/franz-go/pkg/kadm",
		depcheck.Module+"/producer", depcheck.Module+"/consumers", depcheck.Module+"/pipeline", depcheck.Module+"/ops/")
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "",
		depcheck.Module+"/messages", depcheck.Module+"/tracecontext",
		"github.com/twmb/franz-go/pkg/kgo", "go.opentelemetry.io/otel/")
}
