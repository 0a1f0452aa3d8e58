package testsleeps

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowed are the time.Sleep calls left in the module's tests, by file
// (slash path from the module root): how many, and why each is not a wait
// for an event.
var allowed = map[string]struct {
	n      int
	reason string
}{
	"loadgen/loadgen_test.go":         {1, "the fake searcher's latency: simulated work the load engine measures"},
	"gateway/admission_test.go":       {3, "a handler holding its admission slot, an impatient client retrying before Retry-After, a stalled client holding its slot: simulated clients and work"},
	"tracing/metricsproducer_test.go": {1, "the recorded duration itself (lands in a bucket above 25 ms)"},
	"pipeline/scale_test.go":          {1, "pacing: the load's fixed request rate"},
	"pipeline/pipeline_bench_test.go": {1, "pacing: the benchmark's fixed request rate"},
	"pipeline/backlog_memory_test.go": {1, "pacing: the heap and commit sampling interval over the backlog window"},
	"consumers/partitions_test.go":    {3, "simulated per-record handler work, so that a backlog builds"},
	"integration/stack_tests_test.go": {2, "container tier: the poll interval of Jaeger's HTTP API"},
	"integration/stack_test.go":       {1, "container tier: the poll interval of a container's HTTP readiness"},
}

// TestNoNewSleepsInTests fails for every _test.go file with more
// time.Sleep calls than the allow-list grants, and for every allow-list
// entry with fewer (so that the list shrinks when a sleep goes).
func TestNoNewSleepsInTests(t *testing.T) {
	root := moduleRoot(t)
	got := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		n, err := sleeps(path)
		if err != nil {
			return err
		}
		if n > 0 {
			rel, _ := filepath.Rel(root, path)
			got[filepath.ToSlash(rel)] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no time.Sleep found anywhere: the scan is broken (the allow-list names some)")
	}
	for file, n := range got {
		if a := allowed[file]; n > a.n {
			t.Errorf("%s: %d time.Sleep calls, %d allowed: wait for the event instead (a channel, a hook, internal/poll), or add simulated work to the allow-list with its reason", file, n, a.n)
		}
	}
	for file, a := range allowed {
		if got[file] < a.n {
			t.Errorf("%s: %d time.Sleep calls, the allow-list grants %d: lower it", file, got[file], a.n)
		}
	}
}

// sleeps counts the calls of time.Sleep in the Go file path, whatever name
// it imports package time under.
func sleeps(path string) (int, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			name = "time"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" || name == "_" {
		return 0, nil
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if sel, ok := node.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sleep" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				n++
			}
		}
		return true
	})
	return n, nil
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestSleepsCountsEveryImportName: the scan finds time.Sleep under an
// import alias, and nothing in files that do not call it.
func TestSleepsCountsEveryImportName(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]int{
		"package p\nimport t \"time\"\nfunc f() { t.Sleep(1); t.Sleep(2) }\n":       2,
		"package p\nimport (\n\t\"os\"\n\t_ \"time\"\n)\nfunc f() { os.Exit(0) }\n": 0,
		"package p\nfunc f() { clock.Sleep(1) }\n":                                  0,
	} {
		path := filepath.Join(dir, "x_test.go")
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if n, err := sleeps(path); err != nil || n != want {
			t.Errorf("sleeps(%q) = %d, %v; want %d", src, n, err, want)
		}
	}
}
