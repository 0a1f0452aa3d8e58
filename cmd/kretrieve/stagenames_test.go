// SPDX-License-Identifier: Apache-2.0

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// TestNoStageNamesInCmd keeps the stage table the only place that names a
// stage: no non-test file of the command holds a default stage's name as a
// string literal (help texts and defaults take it from the topology).
func TestNoStageNamesInCmd(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, stage := range []string{messages.StageRetrieval, messages.StageEnrichment} {
				if s == stage || strings.Contains(s, "--"+stage+"-") || strings.HasPrefix(s, stage+" ") {
					t.Errorf("%s: the stage name %q in %s: take it from the topology", fset.Position(lit.Pos()), stage, lit.Value)
				}
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files, want the command's", checked)
	}
}
