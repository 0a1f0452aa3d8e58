// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kretrieve/kretrieve/ops/runsummary"
)

// walk calls f for every command of the tree below root that runs
// something, cobra's help and completion commands left out.
func walk(root *cobra.Command, f func(*cobra.Command)) {
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Runnable() && !c.HasSubCommands() {
			f(c)
		}
		walk(c, f)
	}
}

// treeCommands is the tree's commands by path ("dlq list").
func treeCommands() []*cobra.Command {
	var out []*cobra.Command
	walk((&cli{getenv: mapEnv(nil)}).newRoot(), func(c *cobra.Command) { out = append(out, c) })
	return out
}

// path is a command's path below the root: "run", "dlq list".
func path(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), "kretrieve ")
}

// TestStrayArgumentsAreRejected: a command that takes no positional
// argument fails on one, at once and naming it, instead of running
// without it (finding 1: `run x --requests 1` ran 1000 requests, a worker
// given `x --index /nonexist` joined the real group).
func TestStrayArgumentsAreRejected(t *testing.T) {
	var checked []string
	for _, c := range treeCommands() {
		p := path(c)
		if p == "produce" || p == "trace" {
			continue // they take queries and a trace id
		}
		checked = append(checked, p)
		var stdout, stderr bytes.Buffer
		start := time.Now()
		args := append(strings.Fields(p), "x")
		for _, f := range [][2]string{{"requests", "1"}, {"index", "/nonexist"}} {
			if c.Flags().Lookup(f[0]) != nil {
				args = append(args, "--"+f[0], f[1])
			}
		}
		err := run(t.Context(), args, mapEnv(nil), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), `unexpected arguments "x"`) || time.Since(start) > 5*time.Second {
			t.Errorf("%v: err %v after %s", args, err, time.Since(start))
		}
	}
	for _, want := range []string{"run", "load", "retrieval", "enrichment", "gateway", "broker", "lag", "dlq list", "version"} {
		if !slices.Contains(checked, want) {
			t.Errorf("%s: not in the command tree (%v)", want, checked)
		}
	}
	if err := run(t.Context(), []string{"trace", "a", "b"}, mapEnv(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("trace with two trace ids: no error")
	}
	if err := run(t.Context(), []string{"nosuch"}, mapEnv(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `unknown command "nosuch"`) {
		t.Errorf("unknown command: %v", err)
	}
}

// TestFlagsGoAnywhere: a flag after a positional argument is a flag, not
// data (finding 1: `produce gzip --wait` published "--wait"); after "--"
// everything is data.
func TestFlagsGoAnywhere(t *testing.T) {
	c, err := loadProduceConfig([]string{"gzip", "--wait", "tar", "--top-k", "3"}, mapEnv(nil), nil)
	if err != nil || !c.wait || c.topK != 3 || !slices.Equal(c.queries, []string{"gzip", "tar"}) {
		t.Fatalf("wait %v top-k %d queries %q: %v", c.wait, c.topK, c.queries, err)
	}
	c, err = loadProduceConfig([]string{"gzip", "--", "--wait"}, mapEnv(nil), nil)
	if err != nil || c.wait || !slices.Equal(c.queries, []string{"gzip", "--wait"}) {
		t.Fatalf("after --: wait %v queries %q: %v", c.wait, c.queries, err)
	}
	// A flag beats its variable, which beats the default, wherever the
	// flag stands.
	w, err := loadWorkerConfig("retrieval", []string{"--concurrency", "9"}, mapEnv(map[string]string{"KRETRIEVE_CONCURRENCY": "4", "KRETRIEVE_ATTEMPTS": "5"}), nil)
	if err != nil || w.worker.Concurrency != 9 || w.worker.Attempts != 5 || w.worker.MaxPollRecords != 500 {
		t.Fatalf("concurrency %d attempts %d max-poll-records %d: %v", w.worker.Concurrency, w.worker.Attempts, w.worker.MaxPollRecords, err)
	}
	if _, err := loadWorkerConfig("retrieval", nil, mapEnv(map[string]string{"KRETRIEVE_CONCURRENCY": "many"}), nil); err == nil || !strings.Contains(err.Error(), "KRETRIEVE_CONCURRENCY") {
		t.Fatalf("a bad variable: %v", err)
	}
}

// TestHelp: every command's help goes to stdout and succeeds, with a
// description, an example and its flags with their variables; "help CMD"
// prints the same; the top-level help lists the commands (finding 5:
// "run -h" printed "Usage of run:" on stderr, "help run" the top-level
// help).
func TestHelp(t *testing.T) {
	for _, c := range treeCommands() {
		p := strings.Fields(path(c))
		for _, args := range [][]string{append(slices.Clone(p), "-h"), append(slices.Clone(p), "--help"), append([]string{"help"}, p...)} {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), args, mapEnv(nil), &stdout, &stderr); err != nil || stderr.Len() > 0 {
				t.Errorf("%v: err %v, stderr %q", args, err, stderr.String())
				continue
			}
			out := stdout.String()
			for _, want := range []string{strings.SplitN(cmp.Or(c.Long, c.Short), "\n", 2)[0], "Usage:\n  kretrieve " + path(c), "Examples:\n  kretrieve " + p[0], "Flags:\n", "[$KRETRIEVE_"} {
				if !strings.Contains(out, want) {
					t.Errorf("%v: help lacks %q:\n%s", args, want, out)
				}
			}
		}
	}
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, mapEnv(nil), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range treeCommands() {
		if !strings.Contains(stdout.String(), "\n  "+strings.Fields(path(c))[0]+" ") {
			t.Errorf("top-level help does not list %s:\n%s", path(c), stdout.String())
		}
	}
	var stderr bytes.Buffer
	if err := run(t.Context(), nil, mapEnv(nil), &bytes.Buffer{}, &stderr); err == nil || !strings.Contains(stderr.String(), "Available Commands") && !strings.Contains(stderr.String(), "Pipeline:") {
		t.Fatalf("no command: err %v\n%s", err, stderr.String())
	}
}

// TestFlagPlaceholders: each flag's value placeholder in the help is one
// word (a type, or FILE, DIR, URL, ADDR, DURATION), never a phrase pflag
// took from backquotes in the usage (finding 5: "-index kretrieve index").
func TestFlagPlaceholders(t *testing.T) {
	placeholders := map[string]bool{}
	for _, c := range treeCommands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, usage := pflag.UnquoteUsage(f)
			placeholders[name] = true
			if strings.Contains(usage, "`") || name != "" && !regexp.MustCompile(`^[a-zA-Z0-9]+$`).MatchString(name) {
				t.Errorf("%s --%s: placeholder %q, usage %q", path(c), f.Name, name, usage)
			}
		})
	}
	for _, want := range []string{"FILE", "DIR", "URL", "string", "int", "duration"} {
		if !placeholders[want] {
			t.Errorf("no flag shows the placeholder %s (%v)", want, placeholders)
		}
	}
}

// TestVersion: version prints the module, revision and Go version, as text
// or JSON.
func TestVersion(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"version"}, mapEnv(nil), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.HasPrefix(out, "kretrieve ") || !strings.Contains(out, "revision: ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version:\n%s", out)
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"version", "--json"}, mapEnv(nil), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil || v.Go != runtime.Version() || v.Version == "" || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("version --json %q: %+v %v", stdout.String(), v, err)
	}
	if out := (versionInfo{Version: "v1.2.3", Revision: "abc", Dirty: true, Go: "go1"}).text(); !strings.Contains(out, "revision: abc+dirty") || !strings.HasPrefix(out, "kretrieve v1.2.3\n") {
		t.Fatalf("dirty build:\n%s", out)
	}
}

// TestCompletion: completion prints a bash, zsh and fish script, and
// completes commands and flags.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "bash completion V2 for kretrieve", "zsh": "#compdef kretrieve", "fish": "fish completion for kretrieve"} {
		var stdout bytes.Buffer
		if err := run(t.Context(), []string{"completion", shell}, mapEnv(nil), &stdout, &bytes.Buffer{}); err != nil || !strings.Contains(stdout.String(), want) {
			t.Errorf("%s: err %v, script lacks %q", shell, err, want)
		}
	}
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{cobra.ShellCompNoDescRequestCmd, "ret"}, mapEnv(nil), &stdout, &bytes.Buffer{}); err != nil || !strings.Contains(stdout.String(), "retrieval\n") {
		t.Errorf("completing a command: %v\n%s", err, stdout.String())
	}
	stdout.Reset()
	if err := run(t.Context(), []string{cobra.ShellCompNoDescRequestCmd, "run", "--summ"}, mapEnv(nil), &stdout, &bytes.Buffer{}); err != nil || !strings.Contains(stdout.String(), "--summary-json\n") {
		t.Errorf("completing a flag: %v\n%s", err, stdout.String())
	}
}

// TestSummaryJSONToStdout: "--summary-json -" writes the JSON summary to
// stdout, and the text summary to stderr (finding 5: it wrote a file
// named "-").
func TestSummaryJSONToStdout(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"run", "--requests", "3", "--summary-json", "-", "--log-level", "warn"}, mapEnv(nil), &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var s runsummary.Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil || s.Requests.Completed != 3 {
		t.Fatalf("stdout is not the JSON summary (%v): %q", err, stdout.String())
	}
	if !strings.Contains(stderr.String(), "completed 3") {
		t.Fatalf("the text summary is not on stderr:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Fatal(`a file named "-" was written`)
	}
	if _, err := loadRunConfig([]string{"--summary-json", "-", "--spans-file", "-"}, mapEnv(nil), nil); err == nil || !strings.Contains(err.Error(), "only one output can be -") {
		t.Fatalf("two outputs to stdout: %v", err)
	}
}

// commandsFile lists the tree's commands and flags for the deploy tests
// (deploy/compose, deploy/k8s), which cannot import package main.
const commandsFile = "testdata/commands.json"

var update = flag.Bool("update", false, "rewrite "+commandsFile+" from the command tree")

// TestCommandsFile: testdata/commands.json is the command tree's commands
// and flags (go test ./cmd/kretrieve -run TestCommandsFile -update
// rewrites it).
func TestCommandsFile(t *testing.T) {
	var list []listedCommand
	for _, c := range treeCommands() {
		lc := listedCommand{Command: path(c)}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				lc.Flags = append(lc.Flags, listedFlag{Name: f.Name, Variable: envName(f.Name), Type: f.Value.Type(), Default: f.DefValue})
			}
		})
		list = append(list, lc)
	}
	want, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile(commandsFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(commandsFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not the command tree (%v): go test ./cmd/kretrieve -run TestCommandsFile -update", commandsFile, err)
	}
}

// listedCommand is a command of testdata/commands.json.
type listedCommand struct {
	Command string       `json:"command"`
	Flags   []listedFlag `json:"flags"`
}

// listedFlag is a flag of testdata/commands.json: its variable, pflag
// type (bool flags take no value) and default as the help shows it.
type listedFlag struct {
	Name     string `json:"name"`
	Variable string `json:"variable"`
	Type     string `json:"type"`
	Default  string `json:"default"`
}

// TestVersionNamesTheRelease: the version and revision a release build's
// linker flags set (-X main.version, -X main.revision) are what version
// prints; tools/release's TestReleaseIsReproducible runs a release binary.
func TestVersionNamesTheRelease(t *testing.T) {
	saved, savedRev := version, revision
	t.Cleanup(func() { version, revision = saved, savedRev })
	version, revision = "v0.1.0", "8fd53a3"
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"version", "--json"}, mapEnv(nil), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil || v.Version != "v0.1.0" || v.Revision != "8fd53a3" || v.Dirty {
		t.Fatalf("version --json %q: %+v %v", stdout.String(), v, err)
	}
	if got := (versionInfo{Version: "(devel)", Revision: "abc", Dirty: true}).stamped("", ""); got.Version != "(devel)" || got.Revision != "abc" || !got.Dirty {
		t.Fatalf("unstamped build changed: %+v", got)
	}
}
