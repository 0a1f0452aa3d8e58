// SPDX-License-Identifier: Apache-2.0

package corpus

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/kretrieve/kretrieve/search"
)

// buildContext selects the files that build for the current GOOS and
// GOARCH. Cgo is disabled so that the corpus does not depend on whether a
// C compiler is installed; the exported API is the same either way.
var buildContext = func() build.Context {
	c := build.Default
	c.CgoEnabled = false
	return c
}()

// maxValueLen is the longest initializer, in bytes, kept in the declaration
// line of a constant or variable; longer ones are left out.
const maxValueLen = 100

// extractPackage parses the package in dir, below the GOROOT source
// directory src, and returns its documents in no particular order. It
// returns no documents for a directory without a non-main package.
func extractPackage(src, dir string) ([]search.Document, error) {
	rel, err := filepath.Rel(src, dir)
	if err != nil {
		return nil, fmt.Errorf("import path: %w", err)
	}
	importPath := filepath.ToSlash(rel)

	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read package %s: %w", importPath, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		ok, err := buildContext.MatchFile(dir, name)
		if err != nil {
			return nil, fmt.Errorf("match %s/%s: %w", importPath, name, err)
		}
		if !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s/%s: %w", importPath, name, err)
		}
		switch f.Name.Name {
		case "main", "documentation":
			continue
		}
		if len(files) > 0 && files[0].Name.Name != f.Name.Name {
			return nil, fmt.Errorf("package %s: files of packages %s and %s", importPath, files[0].Name.Name, f.Name.Name)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}

	// The builtin package documents predeclared identifiers, which are
	// all lower case but all part of the language.
	var mode doc.Mode
	if importPath == "builtin" {
		mode = doc.AllDecls
	}
	p, err := doc.NewFromFiles(fset, files, importPath, mode)
	if err != nil {
		return nil, fmt.Errorf("doc %s: %w", importPath, err)
	}
	x := &extractor{pkg: p, parser: p.Parser(), printer: p.Printer()}
	x.printer.TextWidth = -1 // one line per paragraph
	return x.documents(), nil
}

// extractor turns one go/doc package into documents.
type extractor struct {
	pkg     *doc.Package
	parser  *comment.Parser
	printer *comment.Printer
	docs    []search.Document
}

// documents returns the documents of x.pkg.
func (x *extractor) documents() []search.Document {
	p := x.pkg
	body := x.text(p.Doc)
	if body == "" {
		body = "package " + p.Name
	}
	x.docs = append(x.docs, search.Document{
		ID:         p.ImportPath,
		Title:      p.ImportPath,
		Body:       body,
		Kind:       KindPackage,
		ImportPath: p.ImportPath,
		URL:        pkgGoDev + p.ImportPath,
		Source:     GoStdlibSource,
	})
	x.values(p.Consts)
	x.values(p.Vars)
	for _, f := range p.Funcs {
		x.fn(f)
	}
	for _, t := range p.Types {
		x.typ(t)
		x.values(t.Consts)
		x.values(t.Vars)
		for _, f := range t.Funcs {
			x.fn(f)
		}
		for _, m := range t.Methods {
			x.method(t, m)
		}
	}
	return x.docs
}

// add appends the document of the package-level identifier name (or
// "Type.Method").
func (x *extractor) add(kind, name string, parts ...string) {
	id := x.pkg.ImportPath + "." + name
	body := joinParts(parts)
	if body == "" {
		body = kind + " " + name
	}
	x.docs = append(x.docs, search.Document{
		ID:         id,
		Title:      id,
		Body:       body,
		Kind:       kind,
		ImportPath: x.pkg.ImportPath,
		URL:        pkgGoDev + x.pkg.ImportPath + "#" + name,
		Source:     GoStdlibSource,
	})
}

// fn adds the document of a function, including those go/doc associates
// with a type (constructors).
func (x *extractor) fn(f *doc.Func) {
	x.add(KindFunc, f.Name, x.node(f.Decl), x.text(f.Doc))
}

// method adds the document of method m of type t. Methods promoted from
// an embedded unexported type (testing.T.TempDir from testing.common) are
// shown with t's receiver, as go doc and pkg.go.dev show them.
func (x *extractor) method(t *doc.Type, m *doc.Func) {
	decl := m.Decl
	if m.Level > 0 && decl.Recv != nil && len(decl.Recv.List) == 1 {
		recv := *decl.Recv.List[0]
		var typ ast.Expr = ast.NewIdent(strings.TrimPrefix(m.Recv, "*"))
		if strings.HasPrefix(m.Recv, "*") {
			typ = &ast.StarExpr{X: typ}
		}
		recv.Type = typ
		promoted := *decl
		promoted.Recv = &ast.FieldList{List: []*ast.Field{&recv}}
		decl = &promoted
	}
	x.add(KindMethod, t.Name+"."+m.Name, x.node(decl), x.text(m.Doc))
}

// typ adds the document of type t. Its declaration line is
// "type Name struct" for structs and interfaces and the whole declaration
// otherwise ("type Duration int64").
func (x *extractor) typ(t *doc.Type) {
	var decl string
	for _, s := range t.Decl.Specs {
		ts, ok := s.(*ast.TypeSpec)
		if !ok || ts.Name.Name != t.Name {
			continue
		}
		short := *ts
		short.Doc, short.Comment = nil, nil
		switch ts.Type.(type) {
		case *ast.StructType:
			short.Type = ast.NewIdent("struct")
		case *ast.InterfaceType:
			short.Type = ast.NewIdent("interface")
		}
		decl = x.node(&ast.GenDecl{Tok: token.TYPE, Specs: []ast.Spec{&short}})
	}
	x.add(KindType, t.Name, decl, x.text(t.Doc))
}

// values adds one document per name declared by the const or var groups
// that carry any documentation. Each body holds the declaration line, the spec's own comments and the
// group's doc comment.
func (x *extractor) values(vs []*doc.Value) {
	for _, v := range vs {
		kind := KindVar
		if v.Decl.Tok == token.CONST {
			kind = KindConst
		}
		group := x.text(v.Doc)
		var typ ast.Expr // type repeated by implicit constant specs
		for _, s := range v.Decl.Specs {
			vs, ok := s.(*ast.ValueSpec)
			if !ok {
				continue
			}
			if vs.Type != nil || len(vs.Values) > 0 || kind == KindVar {
				typ = vs.Type
			}
			specDoc := x.text(vs.Doc.Text())
			specComment := x.text(vs.Comment.Text())
			if group == "" && specDoc == "" && specComment == "" {
				// Undocumented constants and variables (thousands in
				// syscall and debug/*) say nothing a query could match
				// but their names, and crowd out documented APIs.
				continue
			}
			for i, name := range vs.Names {
				if name.Name == "_" || (x.pkg.ImportPath != "builtin" && !token.IsExported(name.Name)) {
					continue
				}
				x.add(kind, name.Name, x.valueDecl(v.Decl.Tok, vs, typ, i), specDoc, specComment, group)
			}
		}
	}
}

// valueDecl returns the declaration line of the i-th name of vs, with its
// type typ and a short initializer when they are written out.
func (x *extractor) valueDecl(tok token.Token, vs *ast.ValueSpec, typ ast.Expr, i int) string {
	one := &ast.ValueSpec{Names: []*ast.Ident{vs.Names[i]}, Type: typ}
	if len(vs.Values) == len(vs.Names) {
		one.Values = []ast.Expr{vs.Values[i]}
		if val := x.node(one.Values[0]); len(val) > maxValueLen || strings.Contains(val, "\n") {
			one.Values = nil
		}
	}
	return x.node(&ast.GenDecl{Tok: tok, Specs: []ast.Spec{one}})
}

// printConfig prints declarations the way gofmt does.
var printConfig = printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}

// node prints n without position information, which keeps lists that span
// several lines in the source on one line.
func (x *extractor) node(n ast.Node) string {
	var buf bytes.Buffer
	if err := printConfig.Fprint(&buf, token.NewFileSet(), n); err != nil {
		return ""
	}
	return strings.TrimSpace(buf.String())
}

// text renders a doc comment as plain text.
func (x *extractor) text(s string) string {
	if s == "" {
		return ""
	}
	return strings.TrimSpace(string(x.printer.Text(x.parser.Parse(s))))
}

// joinParts joins the non-empty parts with blank lines and makes the result
// valid UTF-8.
func joinParts(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	s := b.String()
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
