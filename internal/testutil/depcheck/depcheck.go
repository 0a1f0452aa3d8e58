// Package depcheck backs a package doc's claim that the package uses the
// OpenTelemetry API only: a test of that package calls [OTelAPIOnly], which
// lists its non-test dependencies with go list -deps.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// NotAPI are the import path prefixes of the OpenTelemetry SDK and
// exporters: what a package using the API only never depends on.
var NotAPI = []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"}

// OTelAPIOnly fails t for every non-test dependency of the package in the
// current directory (a test's package) that starts with one of NotAPI or of
// also.
func OTelAPIOnly(t testing.TB, also ...string) {
	t.Helper()
	for _, dep := range Deps(t) {
		for _, p := range append(NotAPI[:len(NotAPI):len(NotAPI)], also...) {
			if strings.HasPrefix(dep, p) {
				t.Errorf("depends on %s", dep)
				break
			}
		}
	}
}

// Deps returns the non-test dependencies of the package in the current
// directory, itself included, as go list -deps prints them.
func Deps(t testing.TB) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	return strings.Fields(string(out))
}
