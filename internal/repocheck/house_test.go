// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the main module's path.
const module = "github.com/kretrieve/kretrieve"

// maxDepth bounds the import graph: the longest chain of the module's own
// packages, and of its top-level folders, one importing the next.
const maxDepth = 8

// corePackages are the data path: they never import the operator's wing
// (ops/), directly or through another package.
var corePackages = []string{"pipeline", "gateway", "producer", "consumers", "kafkatrace", "messages"}

// importGraph returns the module's packages and, for each, the module
// packages its non-test files import, as go list prints them. The same
// graph comes from `go list -f '{{.ImportPath}} {{.Imports}}' ./...`.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	g := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		from := strings.TrimPrefix(f[0], module+"/")
		g[from] = nil
		for _, imp := range f[1:] {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				g[from] = append(g[from], rest)
			}
		}
	}
	if len(g) < 20 {
		t.Fatalf("go list found %d packages, want the whole module", len(g))
	}
	return g
}

// room is the top-level folder that holds pkg.
func room(pkg string) string {
	r, _, _ := strings.Cut(pkg, "/")
	return r
}

// rooms folds a package graph into its top-level folders, leaving out a
// folder's imports of itself.
func rooms(g map[string][]string) map[string][]string {
	r := map[string][]string{}
	for from, imps := range g {
		fr := room(from)
		if _, ok := r[fr]; !ok {
			r[fr] = nil
		}
		for _, imp := range imps {
			if ir := room(imp); ir != fr && !slices.Contains(r[fr], ir) {
				r[fr] = append(r[fr], ir)
			}
		}
	}
	return r
}

// depths returns each node's depth (1 for a node that imports nothing of
// the graph), or the first cycle found.
func depths(g map[string][]string) (map[string]int, []string) {
	depth := map[string]int{}
	onPath := map[string]int{}
	var path []string
	var cycle []string
	var visit func(n string) int
	visit = func(n string) int {
		if d, ok := depth[n]; ok {
			return d
		}
		if i, ok := onPath[n]; ok {
			if cycle == nil {
				cycle = append(slices.Clone(path[i:]), n)
			}
			return 0
		}
		onPath[n] = len(path)
		path = append(path, n)
		d := 1
		for _, m := range g[n] {
			d = max(d, visit(m)+1)
		}
		path = path[:len(path)-1]
		delete(onPath, n)
		depth[n] = d
		return d
	}
	for n := range g {
		visit(n)
	}
	return depth, cycle
}

// longest returns a chain of nodes of the greatest depth, top first.
func longest(g map[string][]string, depth map[string]int) []string {
	var top string
	for n, d := range depth {
		if d > depth[top] || (d == depth[top] && n < top) {
			top = n
		}
	}
	chain := []string{top}
	for n := top; depth[n] > 1; {
		for _, m := range g[n] {
			if depth[m] == depth[n]-1 {
				n = m
				break
			}
		}
		chain = append(chain, n)
	}
	return chain
}

// TestHouse checks the shape of the module's import graph: no cycle between
// top-level folders (so no folder imports one above it), and no chain of
// packages or of folders deeper than maxDepth.
func TestHouse(t *testing.T) {
	g := importGraph(t)
	for name, graph := range map[string]map[string][]string{"packages": g, "top-level folders": rooms(g)} {
		depth, cycle := depths(graph)
		if cycle != nil {
			t.Errorf("%s: import cycle %s", name, strings.Join(cycle, " -> "))
			continue
		}
		if chain := longest(graph, depth); len(chain) > maxDepth {
			t.Errorf("%s: %d deep, at most %d: %s", name, len(chain), maxDepth, strings.Join(chain, " -> "))
		} else {
			t.Logf("%s: %d deep: %s", name, len(chain), strings.Join(chain, " -> "))
		}
	}
}

// TestCoreNeverImportsOps checks that the data path's packages do not
// depend on the operator's wing, through any chain of imports.
func TestCoreNeverImportsOps(t *testing.T) {
	g := importGraph(t)
	for pkg := range g {
		if !slices.Contains(corePackages, room(pkg)) {
			continue
		}
		if via := reaches(g, pkg, "ops"); via != nil {
			t.Errorf("%s imports the operator's wing: %s", pkg, strings.Join(via, " -> "))
		}
	}
}

// reaches returns a chain of imports from pkg to a package in the
// top-level folder to, or nil when there is none.
func reaches(g map[string][]string, pkg, to string) []string {
	from := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if room(n) == to {
			via := []string{n}
			for p := from[n]; p != ""; p = from[p] {
				via = append([]string{p}, via...)
			}
			return via
		}
		for _, m := range g[n] {
			if _, ok := from[m]; !ok {
				from[m] = n
				queue = append(queue, m)
			}
		}
	}
	return nil
}

// TestHouseChecksCanFail feeds the checks graphs that break each rule.
func TestHouseChecksCanFail(t *testing.T) {
	if _, cycle := depths(map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}}); len(cycle) != 4 {
		t.Errorf("cycle a->b->c->a: found %v", cycle)
	}
	chain := map[string][]string{}
	for i := range maxDepth + 1 {
		chain[string(rune('a'+i))] = []string{string(rune('a' + i + 1))}
	}
	chain[string(rune('a'+maxDepth+1))] = nil
	depth, _ := depths(chain)
	if got := longest(chain, depth); len(got) != maxDepth+2 {
		t.Errorf("chain of %d: longest %v", maxDepth+2, got)
	}
	r := rooms(map[string][]string{"ops/console": {"ops/runsummary", "pipeline"}, "ops/runsummary": nil, "pipeline": nil})
	if !slices.Equal(r["ops"], []string{"pipeline"}) {
		t.Errorf("rooms: %v", r)
	}
	g := map[string][]string{"gateway": {"producer"}, "producer": {"ops/spans"}, "ops/spans": nil}
	if via := reaches(g, "gateway", "ops"); !slices.Equal(via, []string{"gateway", "producer", "ops/spans"}) {
		t.Errorf("gateway -> producer -> ops/spans: found %v", via)
	}
	if via := reaches(g, "ops/spans", "gateway"); via != nil {
		t.Errorf("ops/spans reaches gateway: %v", via)
	}
}
