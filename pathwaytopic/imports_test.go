// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package doc's claim: franz-go, and of this module
// only kafkaclient, kafkatrace, pathway and messages.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"github.com/kretrieve/kretrieve/kafkaclient":       true,
		"github.com/kretrieve/kretrieve/kafkatrace":        true,
		"github.com/kretrieve/kretrieve/pathway":           true,
		"github.com/kretrieve/kretrieve/messages":          true,
		"github.com/kretrieve/kretrieve/internal/termsafe": true,
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case !strings.Contains(strings.Split(path, "/")[0], "."): // the standard library
			case strings.HasPrefix(path, "github.com/twmb/franz-go/"):
			case allowed[path]:
			default:
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
