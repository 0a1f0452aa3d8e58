// SPDX-License-Identifier: Apache-2.0

package loadcurve

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyTheStandardLibrary backs the package doc's claim.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/kretrieve/kretrieve/ops/loadcurve" {
			t.Errorf("loadcurve depends on %s", dep)
		}
	}
}
