// SPDX-License-Identifier: Apache-2.0

package compose_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/configdoc"
)

// Paths of the repository files the checks read.
const (
	repoRoot      = "../.."
	composePath   = repoRoot + "/compose.yaml"
	configDocPath = repoRoot + "/docs/configuration.md"
	dockerfile    = repoRoot + "/Dockerfile"
)

// commands reads the binary's command tree as cmd/kretrieve lists it
// (testdata/commands.json, kept equal to the tree by its TestCommandsFile).
func commands(t *testing.T) []configdoc.Command {
	t.Helper()
	cmds, err := configdoc.ReadCommands(filepath.Join(repoRoot, configdoc.CommandsPath))
	if err != nil {
		t.Fatal(err)
	}
	return cmds
}

// subcommands returns the commands cmd/kretrieve runs, by the argument
// that selects them: the stages' worker commands among them.
func subcommands(t *testing.T) []string {
	t.Helper()
	cmds := configdoc.Names(commands(t))
	for _, want := range append([]string{"gateway", "broker"}, stages...) {
		if !slices.Contains(cmds, want) {
			t.Fatalf("%s: command %q not found (found %v)", configdoc.CommandsPath, want, cmds)
		}
	}
	return cmds
}

// flagKind is a flag's pflag type: "bool" flags take no value.
type flagKind string

// declaredFlags returns every flag cmd/kretrieve declares, by name, with
// its type.
func declaredFlags(t *testing.T) map[string]flagKind {
	t.Helper()
	flags := map[string]flagKind{}
	for name, f := range configdoc.Flags(commands(t)) {
		flags[name] = flagKind(f.Type)
	}
	for _, want := range []string{"brokers", "index", "http-listen", "shutdown-timeout"} {
		if _, ok := flags[want]; !ok {
			t.Fatalf("%s: flag %q not found among the declarations (found %d flags)", configdoc.CommandsPath, want, len(flags))
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
