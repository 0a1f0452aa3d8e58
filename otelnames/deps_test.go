// SPDX-License-Identifier: Apache-2.0

package otelnames

import (
	"os/exec"
	"strings"
	"testing"
)

// deps returns the packages pkg depends on, itself included, that are not
// in the standard library.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestImportsOnlyTheAttributeAPI backs the package doc's claim: besides the
// standard library, otelnames depends on go.opentelemetry.io/otel/attribute
// and on what that package itself depends on, nothing else.
func TestImportsOnlyTheAttributeAPI(t *testing.T) {
	const attributeAPI = "go.opentelemetry.io/otel/attribute"
	allowed := map[string]bool{"github.com/kretrieve/kretrieve/otelnames": true}
	for _, d := range deps(t, attributeAPI) {
		allowed[d] = true
	}
	got := deps(t, ".")
	for _, d := range got {
		if !allowed[d] {
			t.Errorf("otelnames depends on %s, which the OTel attribute API does not", d)
		}
	}
	if !strings.Contains(strings.Join(got, " "), attributeAPI) {
		t.Errorf("otelnames does not depend on %s: %v", attributeAPI, got)
	}
}
