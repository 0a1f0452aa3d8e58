package compose_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/configdoc"
)

// Paths of the repository files the checks read.
const (
	repoRoot      = "../.."
	composePath   = repoRoot + "/compose.yaml"
	configDocPath = repoRoot + "/docs/configuration.md"
	cmdDir        = repoRoot + "/cmd/kretrieve"
	dockerfile    = repoRoot + "/Dockerfile"
)

// subcommands returns the commands cmd/kretrieve/main.go dispatches on: the
// string cases of the switch on cmd in func run, help excepted, and the
// stages' worker commands, which run dispatches from the stage table.
func subcommands(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(cmdDir, "main.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "run" || fn.Recv != nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			if id, ok := sw.Tag.(*ast.Ident); !ok || id.Name != "cmd" {
				return true
			}
			for _, s := range sw.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						c, _ := strconv.Unquote(lit.Value)
						if c != "help" && !strings.HasPrefix(c, "-") {
							cmds = append(cmds, c)
						}
					}
				}
			}
			return false
		})
	}
	// Each stage's worker command is dispatched from the stage table.
	cmds = append(cmds, stages...)
	if !slices.Contains(cmds, "gateway") || !slices.Contains(cmds, "retrieval") {
		t.Fatalf("%s: the subcommands were not found in func run (found %v)", cmdDir, cmds)
	}
	return cmds
}

// flagKind is how a flag is declared: str, integer, boolean or duration
// (the methods of cmd/kretrieve/settings.go).
type flagKind string

// declaredFlags returns every flag cmd/kretrieve declares, by name: calls
// s.str(&v, "name", …), s.integer, s.boolean and s.duration in its non-test
// files.
func declaredFlags(t *testing.T) map[string]flagKind {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cmdDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]flagKind{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 3 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch sel.Sel.Name {
			case "str", "integer", "boolean", "duration":
			default:
				return true
			}
			lit, ok := call.Args[1].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			flag, _ := strconv.Unquote(lit.Value)
			flags[flag] = flagKind(sel.Sel.Name)
			return true
		})
	}
	for _, want := range []string{"brokers", "index", "http-listen", "shutdown-timeout"} {
		if _, ok := flags[want]; !ok {
			t.Fatalf("%s: flag %q not found among the declarations (found %d flags)", cmdDir, want, len(flags))
		}
	}
	return flags
}

// envName is the variable bound to a flag.
func envName(flag string) string { return configdoc.EnvName(flag) }

// documentedVars reads the variables documented in docs/configuration.md.
func documentedVars(t *testing.T, cmds []string) (kretrieve map[string][]string, otel map[string]bool) {
	t.Helper()
	kretrieve, otel, err := configdoc.Read(configDocPath, cmds)
	if err != nil {
		t.Fatal(err)
	}
	return kretrieve, otel
}

// sourceContains reports whether a non-test Go file of the module outside
// deploy/ contains s.
func sourceContains(t *testing.T, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "deploy", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if found || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found = strings.Contains(string(b), s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
