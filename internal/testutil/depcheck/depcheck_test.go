// SPDX-License-Identifier: Apache-2.0

package depcheck

import (
	"slices"
	"testing"
)

// recorder is a testing.TB that keeps its errors.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }
func (r *recorder) Helper()                           {}

// TestDepsListsThisPackage: go list -deps runs on the test's package.
func TestDepsListsThisPackage(t *testing.T) {
	deps := Deps(t)
	if !slices.Contains(deps, "github.com/kretrieve/kretrieve/internal/testutil/depcheck") || !slices.Contains(deps, "os/exec") {
		t.Fatalf("deps %v lack the package or its imports", deps)
	}
}

// TestOTelAPIOnlyReportsForbiddenDeps: a forbidden prefix among the
// dependencies is reported, once per dependency.
func TestOTelAPIOnlyReportsForbiddenDeps(t *testing.T) {
	r := &recorder{TB: t}
	OTelAPIOnly(r, "os/")
	if len(r.errs) != 1 { // os/exec
		t.Fatalf("%d errors, want 1 (os/exec)", len(r.errs))
	}
	r = &recorder{TB: t}
	OTelAPIOnly(r)
	if len(r.errs) != 0 {
		t.Fatalf("%d errors for a package without the SDK", len(r.errs))
	}
}

// TestOnlyImportsReportsOthers: the standard library, the package itself,
// allowed paths and paths under an allowed prefix pass; anything else is
// reported, once per import.
func TestOnlyImportsReportsOthers(t *testing.T) {
	imports := []string{"os/exec", "example.com/self", "example.com/a", "example.com/b/c", "example.com/bc", "example.com/d"}
	r := &recorder{TB: t}
	OnlyImports(r, imports, "example.com/self", "example.com/a", "example.com/b/")
	if !slices.Equal(r.errs, []string{"imports %s", "imports %s"}) { // example.com/bc, example.com/d
		t.Fatalf("errors %v, want two", r.errs)
	}
	if !Standard("net/http") || Standard("github.com/x/y") {
		t.Fatal("Standard misclassifies")
	}
}

// TestImportsAndNotImportedBy: this package imports os/exec and no
// kretrieve package, and no package of the binary depends on it.
func TestImportsAndNotImportedBy(t *testing.T) {
	if imps := Imports(t, false); !slices.Contains(imps, "os/exec") {
		t.Fatalf("imports %v lack os/exec", imps)
	}
	if imps := Imports(t, true); !slices.Contains(imps, "slices") {
		t.Fatalf("imports with tests %v lack slices", imps)
	}
	r := &recorder{TB: t}
	NotImportedBy(r, Module+"/internal/testutil/depcheck", Module+"/cmd/...", Module+"/internal/testutil/depcheck")
	if len(r.errs) != 0 {
		t.Fatalf("%d errors", len(r.errs))
	}
	r = &recorder{TB: t}
	NotImportedBy(r, "os/exec", Module+"/internal/testutil/depcheck")
	if len(r.errs) != 1 {
		t.Fatalf("%d errors, want 1 (depcheck depends on os/exec)", len(r.errs))
	}
}
