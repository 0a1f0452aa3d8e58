// SPDX-License-Identifier: Apache-2.0

// Package srcscan reads the module's Go files for tests that check a rule
// over the whole source tree: which files call which functions of an
// imported package (whatever name it is imported under). It is a test
// helper; nothing in the binary imports it.
package srcscan

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ModuleRoot returns the directory of the go.mod at or above the working
// directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// GoFiles returns the Go files below root, as slash paths relative to it:
// the _test.go files when tests is set, the others otherwise. Hidden
// directories, testdata and vendor are skipped.
func GoFiles(root string, tests bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") != tests {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	return out, err
}

// Calls returns the names of importPath's members that the Go file at
// path uses as pkg.Name (calls or values), in source order, under
// whatever name the file imports the package; none when it does not
// import it, or imports it as _ or .
func Calls(path, importPath string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
			local = importPath[strings.LastIndex(importPath, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" || local == "_" || local == "." {
		return nil, nil
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				names = append(names, sel.Sel.Name)
			}
		}
		return true
	})
	return names, nil
}

// ModuleFiles is GoFiles over the module the working directory is in,
// and that module's root.
func ModuleFiles(tests bool) (root string, files []string, err error) {
	if root, err = ModuleRoot(); err != nil {
		return "", nil, err
	}
	files, err = GoFiles(root, tests)
	return root, files, err
}

// ModuleCalls counts, for each Go file of the module (its _test.go files
// when tests is set, the others otherwise), the uses of the named members
// of importPath (see Calls), keyed by the file's slash path relative to
// the module root; files with none are left out.
func ModuleCalls(tests bool, importPath string, names ...string) (map[string]int, error) {
	root, files, err := ModuleFiles(tests)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, rel := range files {
		used, err := Calls(filepath.Join(root, rel), importPath)
		if err != nil {
			return nil, err
		}
		for _, u := range used {
			if slices.Contains(names, u) {
				out[rel]++
			}
		}
	}
	return out, nil
}
