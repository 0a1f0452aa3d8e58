// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
)

// optionCalls are statements that hand components options; a wrong one
// hands a component another package's sealed Option, so it must not
// compile.
var optionCalls = []struct {
	name, call string
	wrong      bool
	want       string // in the compiler's error of a wrong call
}{
	{"lag option to producer.NewClient", "_ = producer.NewClient(ctx, pub, col, lag.WithMeterProvider(mp))", true,
		"lag.Option does not implement producer.Option"},
	{"producer option to results.NewCollector", "_, _ = results.NewCollector(ctx, nil, nil, topology.Topology{}, producer.WithTracerProvider(tp))", true,
		"producer.Option does not implement results.Option"},
	{"gateway option to lag.NewMonitor", "_, _ = lag.NewMonitor(nil, lag.MonitorConfig{}, gateway.WithMeterProvider(mp))", true,
		"gateway.Option does not implement lag.Option"},
	{"pipeline option to dlq.Replay", "_, _ = dlq.Replay(ctx, nil, nil, dlq.ReplayConfig{}, pipeline.WithLogger(nil))", true,
		"pipeline.Option does not implement dlq.Option"},
	{"dlq option to gateway.New", "_, _ = gateway.New(gateway.Config{}, nil, nil, dlq.WithTracerProvider(tp))", true,
		"dlq.Option does not implement gateway.Option"},
	{"the right options", "_ = producer.NewClient(ctx, pub, col, producer.WithTracerProvider(tp))\n" +
		"_, _ = results.NewCollector(ctx, nil, nil, topology.Topology{}, results.WithLogger(nil))\n" +
		"_, _ = lag.NewMonitor(nil, lag.MonitorConfig{}, lag.WithMeterProvider(mp))\n" +
		"_, _ = dlq.Replay(ctx, nil, nil, dlq.ReplayConfig{}, dlq.WithLogger(nil))\n" +
		"_, _ = gateway.New(gateway.Config{}, nil, nil, gateway.WithTracerProvider(tp))\n" +
		"_, _ = pipeline.New(pipeline.Config{}, pipeline.WithMeterProvider(mp))", false, ""},
}

// optionProgram is a package whose one func runs the statements (%s) with
// the arguments they use in scope.
const optionProgram = `package optioncheck

import (
	"context"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/topology"
)

var (
	_ = dlq.Replay
	_ = gateway.New
	_ = lag.NewMonitor
	_ = pipeline.New
	_ = results.NewCollector
	_ = topology.Topology{}
)

func calls(ctx context.Context, pub *producer.Publisher, col *results.Collector, mp metric.MeterProvider, tp trace.TracerProvider) {
	%s
}
`

// buildWithOverlay compiles a package of the module, made only of the
// source src, which lives nowhere on disk but in a go build -overlay; it
// returns the compiler's output and whether the build succeeded.
func buildWithOverlay(t *testing.T, src string) (string, bool) {
	t.Helper()
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "optioncheck.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "internal", "repocheck", "optioncheck")
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkg, "optioncheck.go"): file}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", overlayFile, "./internal/repocheck/optioncheck")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, exit := err.(*exec.ExitError); !exit {
			t.Fatalf("go build: %v", err)
		}
	}
	return string(out), err == nil
}

// TestAnotherPackagesOptionDoesNotCompile: every package's Option is its
// own sealed type (docs/ARCHITECTURE.md, "Options"), so handing a
// component another package's option is a type error naming both types,
// where a shared option type compiled and was silently dropped; the
// package's own options build.
func TestAnotherPackagesOptionDoesNotCompile(t *testing.T) {
	for _, c := range optionCalls {
		t.Run(c.name, func(t *testing.T) {
			out, ok := buildWithOverlay(t, strings.Replace(optionProgram, "%s", c.call, 1))
			switch {
			case c.wrong && ok:
				t.Errorf("%s compiles: a wrong option would be silently dropped", c.call)
			case c.wrong && (!strings.Contains(out, c.want) || strings.Count(out, "optioncheck.go:") != 1):
				t.Errorf("%s: the build failed, but not with %q alone:\n%s", c.call, c.want, out)
			case !c.wrong && !ok:
				t.Errorf("%s does not compile:\n%s", c.call, out)
			}
		})
	}
}

// optionExceptions are the exported option types, file: name, that are
// not (yet) sealed interfaces of their own, and why.
var optionExceptions = map[string]string{}

// TestEveryOptionIsSealed backs the "Options" section of
// docs/ARCHITECTURE.md: every exported type of a non-test file named
// Option, or ending in Option, is an interface (not an alias, not a func
// type) whose methods are all unexported, so only its package makes one.
func TestEveryOptionIsSealed(t *testing.T) {
	root, files, err := srcscan.ModuleFiles(false)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, f), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range typeSpecs(parsed) {
			name := spec.Name.Name
			if !ast.IsExported(name) || !strings.HasSuffix(name, "Option") {
				continue
			}
			key := f + ": " + name
			seen[key] = true
			if problem := sealed(spec); problem != "" && optionExceptions[key] == "" {
				t.Errorf("%s %s: write it as `type %s interface{ apply(*options) }` (docs/ARCHITECTURE.md, \"Options\")", key, problem, name)
			}
		}
	}
	if !seen["producer/options.go: Option"] {
		t.Error("the scan did not find producer.Option")
	}
	for key := range optionExceptions {
		if !seen[key] {
			t.Errorf("%s is gone: remove it from optionExceptions", key)
		}
	}
}

// typeSpecs returns the top-level type declarations of f.
func typeSpecs(f *ast.File) []*ast.TypeSpec {
	var out []*ast.TypeSpec
	for _, decl := range f.Decls {
		if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
			for _, s := range gd.Specs {
				out = append(out, s.(*ast.TypeSpec))
			}
		}
	}
	return out
}

// sealed returns what keeps spec from being a sealed option interface, ""
// when nothing does.
func sealed(spec *ast.TypeSpec) string {
	if spec.Assign.IsValid() {
		return "is an alias"
	}
	it, ok := spec.Type.(*ast.InterfaceType)
	if !ok {
		return "is not an interface"
	}
	if len(it.Methods.List) == 0 {
		return "has no method"
	}
	for _, m := range it.Methods.List {
		if len(m.Names) == 0 {
			return "embeds another type"
		}
		for _, n := range m.Names {
			if ast.IsExported(n.Name) {
				return "has the exported method " + n.Name
			}
		}
	}
	return ""
}
