// SPDX-License-Identifier: Apache-2.0

package otelnames

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
)

// referenceDoc is a markdown file of the telemetry reference: Path relative
// to this package, and the "## " sections of it that belong to the
// reference, by heading prefix (none: the whole file).
type referenceDoc struct {
	Path     string
	Sections []string
}

// referenceDocs is the telemetry reference the package is tested against:
// all of docs/telemetry.md.
var referenceDocs = []referenceDoc{{Path: "../docs/telemetry.md"}}

// notYetDocumented are the package's names the reference does not name
// yet. The test fails when one of them is documented (remove it here) or
// leaves the package; the list only shrinks.
var notYetDocumented = []string{
	"kretrieve.request.top_k", "kretrieve.request.outcome",
	"kretrieve.enrich.candidates", "kretrieve.enrich.loaded",
	"kretrieve.enrich.duplicates", "kretrieve.enrich.documents", "kretrieve.enrich.reordered",
	"kretrieve.results.dropped", "reason", "kretrieve.gateway.refused",
	"dedupe", "rerank",
}

// vocabulary is the package's names, read from its source: constant name
// -> value. Units are left out: they are not names.
func vocabulary(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := srcscan.GoFiles(".", false) // the package has no subdirectories
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if strings.HasSuffix(name.Name, "Unit") {
						continue
					}
					e := vs.Values[i]
					if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 { // attribute.Key("...")
						e = call.Args[0]
					}
					lit, ok := e.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: %s is not a string literal or attribute.Key of one", fset.Position(name.Pos()), name.Name)
					}
					out[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("read only %d names from the package", len(out))
	}
	return out
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// docNames are the names a reference line mentions in code spans: the text
// before any "=" or "{", with continuations expanded, as in
// `kretrieve.dlq.reason`/`.error_type` (kretrieve.dlq.error_type).
func docNames(line string) []string {
	var out []string
	prev := ""
	for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
		n := m[1]
		if i := strings.IndexAny(n, "={"); i > 0 {
			n = n[:i]
		}
		if strings.HasPrefix(n, ".") && strings.Contains(prev, ".") {
			n = prev[:strings.LastIndex(prev, ".")] + n
		}
		out = append(out, n)
		prev = n
	}
	return out
}

// reference reads the reference's lines: all of them, and the rows of its
// tables.
func reference(t *testing.T) (lines, rows []string) {
	t.Helper()
	for _, d := range referenceDocs {
		f, err := os.Open(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		in := len(d.Sections) == 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if h, ok := strings.CutPrefix(line, "## "); ok && len(d.Sections) > 0 {
				in = slices.ContainsFunc(d.Sections, func(s string) bool { return strings.HasPrefix(h, s) })
				continue
			}
			if !in {
				continue
			}
			lines = append(lines, line)
			if strings.HasPrefix(line, "|") {
				rows = append(rows, line)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no tables in %v", referenceDocs)
	}
	return lines, rows
}

// TestReferenceNamesEveryName: every span name, attribute key and metric
// name of the package appears in the telemetry reference, in a code span
// (an operation as `send <topic>`), except those listed in
// notYetDocumented.
func TestReferenceNamesEveryName(t *testing.T) {
	vocab := vocabulary(t)
	lines, _ := reference(t)
	documented := map[string]bool{}
	ops := map[string]bool{}
	for _, l := range lines {
		for _, n := range docNames(l) {
			documented[n] = true
			if op, _, ok := strings.Cut(n, " <"); ok {
				ops[op] = true
			}
			if strings.HasPrefix(n, BaggagePrefix) {
				documented[BaggagePrefix] = true
			}
		}
	}
	values := map[string]bool{}
	for name, v := range vocab {
		values[v] = true
		found := documented[v]
		if strings.HasPrefix(name, "Op") {
			found = ops[v]
		}
		switch {
		case !found && !slices.Contains(notYetDocumented, v):
			t.Errorf("%s (%q) is not in the telemetry reference %v", name, v, referenceDocs)
		case found && slices.Contains(notYetDocumented, v):
			t.Errorf("%s (%q) is documented now: remove it from notYetDocumented", name, v)
		}
	}
	for _, v := range notYetDocumented {
		if !values[v] {
			t.Errorf("notYetDocumented lists %q, which the package does not name", v)
		}
	}
}

// TestReferenceNamesExist: every kretrieve.* name in the reference's tables
// is the package's, and every span of its span table ("| Span |") is a span
// name or an operation of the package.
func TestReferenceNamesExist(t *testing.T) {
	vocab := vocabulary(t)
	values := map[string]bool{}
	ops := map[string]bool{}
	for name, v := range vocab {
		values[v] = true
		if strings.HasPrefix(name, "Op") {
			ops[v] = true
		}
	}
	_, rows := reference(t)
	spanTable := false
	for _, row := range rows {
		cells := strings.Split(row, "|")
		first := strings.TrimSpace(cells[1])
		switch {
		case first == "Span":
			spanTable = true
			continue
		case strings.HasPrefix(first, "---"):
			continue
		case !strings.HasPrefix(first, "`"):
			spanTable = false
		}
		if spanTable {
			span := strings.Trim(first, "`")
			if op, _, ok := strings.Cut(span, " <"); ok && !ops[op] || !ok && !values[span] {
				t.Errorf("span %q of the reference's span table is not the package's", span)
			}
		}
		for _, n := range docNames(row) {
			if strings.HasPrefix(n, "kretrieve.") && !values[n] && !strings.HasPrefix(n, BaggagePrefix) {
				t.Errorf("%q in the reference's tables is not the package's: %s", n, row)
			}
		}
	}
}
