// SPDX-License-Identifier: Apache-2.0

package srcscan

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCallsUnderAnyImportName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"plain.go", "package x\nimport \"time\"\nfunc f() { time.Sleep(1); _ = time.Now() }\n", []string{"Sleep", "Now"}},
		{"alias.go", "package x\nimport t \"time\"\nfunc f() { t.Sleep(1) }\n", []string{"Sleep"}},
		{"none.go", "package x\nimport \"fmt\"\nfunc f() { fmt.Println() }\n", nil},
		{"blank.go", "package x\nimport _ \"time\"\n", nil},
	} {
		got, err := Calls(write(c.name, c.src), "time")
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if _, err := Calls(write("broken.go", "package"), "time"); err == nil {
		t.Error("a file that does not parse gave no error")
	}
}

func TestGoFilesSplitsTests(t *testing.T) {
	root, src, err := ModuleFiles(false)
	if err != nil {
		t.Fatal(err)
	}
	tests, err := GoFiles(root, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(src, "internal/testutil/srcscan/srcscan.go") || slices.Contains(src, "internal/testutil/srcscan/srcscan_test.go") ||
		!slices.Contains(tests, "internal/testutil/srcscan/srcscan_test.go") || slices.Contains(tests, "internal/testutil/srcscan/srcscan.go") {
		t.Errorf("GoFiles: %d source files, %d test files, this package's not where they belong", len(src), len(tests))
	}
}
