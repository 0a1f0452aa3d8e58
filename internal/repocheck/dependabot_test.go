// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
	"github.com/kretrieve/kretrieve/internal/testutil/yamlfile"
)

// manifests returns the directories, relative to the repository root and
// written as dependabot writes them ("/", "/integration"), that hold a file
// named name, outside node_modules, bin, build output and hidden folders.
func manifests(t *testing.T, root, name string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" ||
			p == filepath.Join(root, "bin") || p == filepath.Join(root, "build")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == name {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			dirs = append(dirs, path.Clean("/"+filepath.ToSlash(rel)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	return dirs
}

// TestDependabotCoversEveryModule: .github/dependabot.yml asks for updates
// of every Go module of the repository (each go.mod) and every npm package
// (each package.json), and lists no directory that holds none; and the
// Makefile's GO_MODULES, which make tidy and make vulncheck go through,
// names every Go module too.
func TestDependabotCoversEveryModule(t *testing.T) {
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `yaml:"version"`
		Updates []struct {
			Ecosystem   string   `yaml:"package-ecosystem"`
			Directory   string   `yaml:"directory"`
			Directories []string `yaml:"directories"`
			Schedule    struct {
				Interval string `yaml:"interval"`
			} `yaml:"schedule"`
		} `yaml:"updates"`
	}
	yamlfile.Read(t, filepath.Join(root, ".github/dependabot.yml"), &cfg)
	if cfg.Version != 2 {
		t.Errorf("dependabot.yml version %d, want 2", cfg.Version)
	}
	listed := map[string][]string{}
	for _, u := range cfg.Updates {
		if u.Schedule.Interval == "" {
			t.Errorf("%s: no schedule interval", u.Ecosystem)
		}
		dirs := u.Directories
		if u.Directory != "" {
			dirs = append(dirs, u.Directory)
		}
		listed[u.Ecosystem] = append(listed[u.Ecosystem], dirs...)
	}
	for eco, file := range map[string]string{"gomod": "go.mod", "npm": "package.json"} {
		want := manifests(t, root, file)
		got := slices.Sorted(slices.Values(listed[eco]))
		if !slices.Equal(got, want) {
			t.Errorf("dependabot.yml %s directories %q, the repository's %s files are in %q", eco, got, file, want)
		}
	}
	if len(listed["gomod"]) < 4 {
		t.Errorf("only %d Go modules found: %q", len(listed["gomod"]), listed["gomod"])
	}

	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^GO_MODULES\s*\?=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no GO_MODULES")
	}
	var mods []string
	for _, f := range strings.Fields(string(m[1])) {
		mods = append(mods, path.Clean("/"+f))
	}
	slices.Sort(mods)
	if want := manifests(t, root, "go.mod"); !slices.Equal(mods, want) {
		t.Errorf("Makefile GO_MODULES %q, the repository's modules are %q", mods, want)
	}
}

// TestLintChecksGoModTidy: make lint runs make tidy, which runs
// `go mod tidy -diff` (it fails on any change and changes nothing) in
// every module of GO_MODULES.
func TestLintChecksGoModTidy(t *testing.T) {
	if out := dryRun(t, "lint"); !strings.Contains(out, "tidy") {
		t.Errorf("make lint does not run make tidy:\n%s", out)
	}
	out := dryRun(t, "tidy")
	if !strings.Contains(out, "go mod tidy -diff") || !strings.Contains(out, "for m in . integration tools/jaeger tools/prometheus") {
		t.Errorf("make tidy does not run go mod tidy -diff in every module:\n%s", out)
	}
}
