// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsFranzGoAndTheMetricAPIOnly backs the package doc.
func TestImportsFranzGoAndTheMetricAPIOnly(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "",
		"github.com/twmb/franz-go/", "go.opentelemetry.io/otel/metric", "github.com/kretrieve/kretrieve/internal/backoff")
}
