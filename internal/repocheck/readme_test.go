// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
)

// readmeFileArg reports whether tok, an argument of a README command, names
// an input file the repository must ship: the value of --file, or a relative
// path with a data file's extension.
func readmeFileArg(prev, tok string) bool {
	if strings.HasPrefix(tok, "-") || strings.HasPrefix(tok, "/") || strings.Contains(tok, "://") || strings.ContainsAny(tok, `"'$`) {
		return false
	}
	if prev == "--file" {
		return true
	}
	switch filepath.Ext(tok) {
	case ".txt", ".jsonl", ".json", ".yaml", ".yml", ".csv":
		return true
	}
	return false
}

// TestReadmeCommandsFilesExist: every file a README command run from the
// repository root (a line of a code block starting with bin/kretrieve,
// make or go) reads, exists there: `bin/kretrieve produce --file
// cmd/kretrieve/queries.txt` used to name a queries.txt the root does not
// hold.
func TestReadmeCommandsFilesExist(t *testing.T) {
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	inBlock, checked := false, 0
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		cmd, _, _ := strings.Cut(line, "#")
		fields := strings.Fields(cmd)
		if !inBlock || len(fields) == 0 || (fields[0] != "bin/kretrieve" && fields[0] != "make" && fields[0] != "go") {
			continue
		}
		for j := 1; j < len(fields); j++ {
			if !readmeFileArg(fields[j-1], fields[j]) {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(root, fields[j])); err != nil {
				t.Errorf("README.md:%d: %q names %s, which is not in the repository root: %v", i+1, strings.TrimSpace(cmd), fields[j], err)
			}
		}
	}
	if checked == 0 {
		t.Error("no README command names a file: the produce --file example is gone, or this test no longer finds it")
	}
}
