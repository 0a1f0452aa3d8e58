// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
)

// licenceHeader is the first line of every Go file the project writes,
// then a blank line (CONTRIBUTING.md, "Licence headers"): the SPDX
// identifier of the licence in LICENSE. A //go:build line and a package
// comment follow it.
const licenceHeader = "// SPDX-License-Identifier: Apache-2.0\n"

// generated matches Go's marker of a generated file (go help generate),
// which carries no header.
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// TestLicenceHeaders: every Go file of the repository (every module, tests
// included; not testdata, not generated files) starts with licenceHeader
// and a blank line. With -update it adds the header where it is missing.
func TestLicenceHeaders(t *testing.T) {
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, tests := range []bool{false, true} {
		f, err := srcscan.GoFiles(root, tests)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f...)
	}
	if len(files) < 100 {
		t.Fatalf("found %d Go files below %s, want the whole repository", len(files), root)
	}
	checked := 0
	for _, rel := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if generated.Match(src) {
			continue
		}
		checked++
		if bytes.HasPrefix(src, []byte(licenceHeader+"\n")) {
			continue
		}
		if !*update {
			t.Errorf("%s: does not start with %q and a blank line (go test ./internal/repocheck -run TestLicenceHeaders -update adds it)", rel, licenceHeader)
			continue
		}
		if err := os.WriteFile(path, append([]byte(licenceHeader+"\n"), src...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d Go files checked, %d generated ones left out", checked, len(files)-checked)
}
