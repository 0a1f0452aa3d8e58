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
