// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kretrieve/kretrieve/search"
)

// GoStdlibSource is the [search.Document.Source] of every document
// returned by [GoStdlib].
const GoStdlibSource = "go-stdlib"

// Kinds of the documents returned by [GoStdlib], stored in
// [search.Document.Kind].
const (
	KindPackage = "package" // a package: ID "net/url"
	KindFunc    = "func"    // a function: ID "net/url.ParseQuery"
	KindType    = "type"    // a type: ID "bufio.Scanner"
	KindMethod  = "method"  // a method: ID "bufio.Scanner.Scan"
	KindConst   = "const"   // a constant: ID "os.O_RDONLY"
	KindVar     = "var"     // a variable: ID "io.EOF"
)

// pkgGoDev is the prefix of every URL in the Go corpus.
const pkgGoDev = "https://pkg.go.dev/"

// GoStdlib extracts the demo corpus from the Go standard library source
// under goroot/src: one document per package and per exported function,
// type, method (of an exported type), constant and variable. If goroot is
// empty, runtime.GOROOT() is used and, if that is empty too, the output of
// "go env GOROOT".
//
// Only files that build for the current GOOS and GOARCH (with cgo
// disabled) are read, so each identifier appears once. Directories named
// internal, vendor, testdata or cmd, directories whose name starts with "."
// or "_", test files and main packages are skipped. Packages are parsed in
// parallel (GOMAXPROCS workers); the result is sorted by ID, IDs are unique
// and every Body is non-empty valid UTF-8.
//
// GoStdlib checks ctx between packages and returns ctx.Err() once it is
// done.
func GoStdlib(ctx context.Context, goroot string) ([]search.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	root, err := resolveGOROOT(ctx, goroot)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(root, "src")
	dirs, err := packageDirs(ctx, src)
	if err != nil {
		return nil, err
	}

	results := make([][]search.Document, len(dirs))
	errs := make([]error, len(dirs))

	// work is cancelled by the caller or by the first package error.
	work, cancel := context.WithCancel(ctx)
	defer cancel()

	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(dirs)) {
		wg.Go(func() {
			for i := range jobs {
				if work.Err() != nil {
					continue
				}
				if extractStarted != nil {
					extractStarted()
				}
				results[i], errs[i] = extractPackage(src, dirs[i])
				if errs[i] != nil {
					cancel()
				}
			}
		})
	}
feed:
	for i := range dirs {
		select {
		case jobs <- i:
		case <-work.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()

	// Report the earliest package error in walk order (of the packages
	// extracted before the cancellation).
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	n := 0
	for _, r := range results {
		n += len(r)
	}
	docs := make([]search.Document, 0, n)
	for _, r := range results {
		docs = append(docs, r...)
	}
	slices.SortStableFunc(docs, func(a, b search.Document) int {
		return strings.Compare(a.ID, b.ID)
	})
	docs = slices.CompactFunc(docs, func(a, b search.Document) bool {
		return a.ID == b.ID
	})
	return slices.Clip(docs), nil
}

// resolveGOROOT returns goroot, runtime.GOROOT() or "go env GOROOT", the
// first that is not empty, and checks that it has a src directory.
func resolveGOROOT(ctx context.Context, goroot string) (string, error) {
	if goroot == "" {
		//lint:ignore SA1019 the build's GOROOT is the first guess on purpose (a development binary on the machine that built it); "go env GOROOT" follows when it is empty (-trimpath).
		goroot = runtime.GOROOT()
	}
	if goroot == "" {
		out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
		if err != nil {
			return "", fmt.Errorf("go env GOROOT: %w", err)
		}
		goroot = strings.TrimSpace(string(out))
		if goroot == "" {
			return "", errors.New("go env GOROOT: empty")
		}
	}
	src := filepath.Join(goroot, "src")
	fi, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("goroot: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("goroot: %s is not a directory", src)
	}
	return goroot, nil
}

// packageDirs walks src and returns, in lexical order, every directory that
// may hold a public standard library package.
func packageDirs(ctx context.Context, src string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != src && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if path != src {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk goroot: %w", err)
	}
	return dirs, nil
}

// extractStarted, when set by a test, is called as each package's
// extraction starts.
var extractStarted func()

// skipDir reports whether the directory named name, and everything below
// it, is left out of the corpus.
func skipDir(name string) bool {
	switch name {
	case "internal", "vendor", "testdata", "cmd":
		return true
	}
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}
