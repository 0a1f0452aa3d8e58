package global

import (
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestNilFallsBackToTheGlobals: nil gives the global, anything else is kept.
func TestNilFallsBackToTheGlobals(t *testing.T) {
	if TracerProvider(nil) != otel.GetTracerProvider() || MeterProvider(nil) != otel.GetMeterProvider() ||
		Propagator(nil) != otel.GetTextMapPropagator() || Logger(nil) != slog.Default() {
		t.Error("nil did not give the global")
	}
	tp, mp, p := tracenoop.NewTracerProvider(), noop.NewMeterProvider(), propagation.Baggage{}
	l := slog.New(slog.DiscardHandler)
	if TracerProvider(tp) != tp || MeterProvider(mp) != mp || Propagator(p) != p || Logger(l) != l {
		t.Error("a given value was replaced")
	}
}

// globalGetters are the functions that read the OpenTelemetry globals.
var globalGetters = map[string]bool{"GetTracerProvider": true, "GetMeterProvider": true, "GetTextMapPropagator": true}

// allowed are the non-test files besides this package's that may read the
// OpenTelemetry globals, and why.
// None today; an entry needs a reason the package doc can live with.
var allowed = map[string]string{}

// TestOnlyHomeOfTheGlobals backs the package doc: no other non-test file
// of the module calls otel.GetTracerProvider, otel.GetMeterProvider or
// otel.GetTextMapPropagator.
func TestOnlyHomeOfTheGlobals(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	found := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		for _, call := range globalCalls(t, p) {
			found[rel] = true
			if rel != "internal/global/global.go" && allowed[rel] == "" {
				t.Errorf("%s calls otel.%s: use package internal/global", rel, call)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !found["internal/global/global.go"] {
		t.Error("the scan did not find this package's own calls")
	}
	for f := range allowed {
		if !found[f] {
			t.Errorf("%s no longer reads the globals: remove it from allowed", f)
		}
	}
}

// globalCalls returns the otel.Get* functions that the file at path calls.
func globalCalls(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "go.opentelemetry.io/otel" {
			local = "otel"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var calls []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && globalGetters[sel.Sel.Name] {
				calls = append(calls, sel.Sel.Name)
			}
		}
		return true
	})
	return calls
}
