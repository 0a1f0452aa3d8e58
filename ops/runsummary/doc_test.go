// SPDX-License-Identifier: Apache-2.0

package runsummary_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOfKretrieve backs the package doc: of kretrieve, runsummary
// imports only otelnames' span names and ops/spans.
func TestImportsOfKretrieve(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{"github.com/kretrieve/kretrieve/otelnames": true, "github.com/kretrieve/kretrieve/ops/spans": true}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, "github.com/kretrieve/kretrieve/") && !allowed[imp] {
			t.Errorf("runsummary imports %s", imp)
		}
	}
}
