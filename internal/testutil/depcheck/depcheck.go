// SPDX-License-Identifier: Apache-2.0

// Package depcheck backs a package doc's claims about its imports with go
// list: that the package uses the OpenTelemetry API only ([OTelAPIOnly],
// over its non-test dependencies), that it imports only certain packages
// ([Imports] with [OnlyImports]), and that some packages, the binary's say,
// never depend on it ([NotImportedBy]). A test of that package calls them.
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

// Module is the import path of kretrieve's main module.
const Module = "github.com/kretrieve/kretrieve"

// Imports returns the direct imports of the package in the current
// directory: its non-test imports, and with tests its test and external
// test imports too (for a package that has only tests).
func Imports(t testing.TB, tests bool) []string {
	t.Helper()
	format := `{{join .Imports "\n"}}`
	if tests {
		format += `{{"\n"}}{{join .TestImports "\n"}}{{"\n"}}{{join .XTestImports "\n"}}`
	}
	out, err := exec.Command("go", "list", "-f", format, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// OwnImports returns the imports of Imports that are packages of
// kretrieve's main module.
func OwnImports(t testing.TB, tests bool) []string {
	t.Helper()
	var ours []string
	for _, imp := range Imports(t, tests) {
		if strings.HasPrefix(imp, Module+"/") {
			ours = append(ours, imp)
		}
	}
	return ours
}

// Standard reports whether path is a standard library package: its first
// element has no dot.
func Standard(path string) bool {
	return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
}

// OnlyImports fails t for every import in imports that is not in the
// standard library, not allowed and not the package itself (self, an
// external test's import of the package it tests). An allowed entry ending
// in "/" allows every path under it; any other allows that path only.
func OnlyImports(t testing.TB, imports []string, self string, allowed ...string) {
	t.Helper()
	for _, imp := range imports {
		if Standard(imp) || imp == self || allowedPath(imp, allowed) {
			continue
		}
		t.Errorf("imports %s", imp)
	}
}

func allowedPath(imp string, allowed []string) bool {
	for _, a := range allowed {
		if imp == a || strings.HasSuffix(a, "/") && strings.HasPrefix(imp, a) {
			return true
		}
	}
	return false
}

// NotImportedBy fails t for every package matched by patterns (go list
// patterns such as Module+"/cmd/...") that depends on pkg; pkg itself may
// be among them.
func NotImportedBy(t testing.TB, pkg string, patterns ...string) {
	t.Helper()
	args := append([]string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", patterns, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, dep := range f[1:] {
			if dep == pkg {
				t.Errorf("%s depends on %s", f[0], pkg)
			}
		}
	}
}
