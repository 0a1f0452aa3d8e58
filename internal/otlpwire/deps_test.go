// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsNoKretrievePackage backs the package doc: the OTel SDK and
// the OTLP protobuf definitions, no kretrieve package.
func TestImportsNoKretrievePackage(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "",
		"go.opentelemetry.io/", "google.golang.org/protobuf/")
}
