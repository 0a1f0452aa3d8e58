// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
)

// fakeGovulncheck is a stand-in for govulncheck: an http(s) database is
// unreachable (as offline), a file:// one must hold OSV entries, and the
// exit code for a checked module is $FAKE_RC.
const fakeGovulncheck = `#!/usr/bin/env bash
db="$2"
echo "$PWD $db" >>"$FAKE_LOG"
[ -z "$FAKE_ARGS" ] || echo "$PWD ${*:3}" >>"$FAKE_ARGS"
case "$db" in
http*) echo "govulncheck: fetching vulnerabilities: dial tcp: lookup vuln.go.dev: no such host"; exit 1;;
file://*) ls "${db#file://}"/GO-*.json >/dev/null 2>&1 || { echo "no OSV entries in $db"; exit 2; }
  echo "checked against $db"
  for id in $FAKE_FINDINGS; do echo "Vulnerability #1: $id"; echo "    Some vulnerability"; done
  exit "${FAKE_RC:-0}";;
esac
exit 9
`

// vulncheck runs tools/vulncheck.sh with the fake govulncheck on the main
// module and integration/, and returns its output, exit code and the
// fake's calls (directory and database).
func vulncheck(t *testing.T, env ...string) (out string, rc int, calls []string) {
	t.Helper()
	return vulncheckModules(t, []string{".", "integration"}, env...)
}

// vulncheckModules is vulncheck on the modules mods.
func vulncheckModules(t *testing.T, mods []string, env ...string) (out string, rc int, calls []string) {
	t.Helper()
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fake, log := filepath.Join(dir, "govulncheck"), filepath.Join(dir, "calls")
	if err := os.WriteFile(fake, []byte(fakeGovulncheck), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "tools/vulncheck.sh"), mods...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), append([]string{"GOVULNCHECK=" + fake, "FAKE_LOG=" + log, "GOVULNDB=https://vuln.go.dev"}, env...)...)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		rc = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	logged, _ := os.ReadFile(log)
	return string(b), rc, strings.Fields(strings.ReplaceAll(string(logged), "\n", " "))
}

// TestVulncheckFallsBackToTheSnapshot: offline, govulncheck runs on both
// modules against the committed snapshot, and the output gives its date.
func TestVulncheckFallsBackToTheSnapshot(t *testing.T) {
	out, rc, calls := vulncheck(t)
	if rc != 0 {
		t.Fatalf("exit %d:\n%s", rc, out)
	}
	if !strings.Contains(out, "committed snapshot of the Go vulnerability database of "+snapshotMeta(t)["date"]) {
		t.Errorf("the output does not say the snapshot and its date are used:\n%s", out)
	}
	checked := 0
	for i := 1; i < len(calls); i += 2 {
		if strings.HasPrefix(calls[i], "file://") {
			checked++
		}
	}
	if checked != 2 || strings.Count(out, "checked against file://") != 2 {
		t.Errorf("want both modules checked against the snapshot; calls %v:\n%s", calls, out)
	}
}

// TestVulncheckFindingsFail: a finding (govulncheck exits 3) fails make lint.
func TestVulncheckFindingsFail(t *testing.T) {
	if out, rc, _ := vulncheck(t, "FAKE_RC=3"); rc != 3 {
		t.Fatalf("exit %d on findings, want 3:\n%s", rc, out)
	}
}

// TestVulncheckChecksToolsModulesPrograms: make vulncheck goes through
// every module of GO_MODULES, the tools modules included, and a tools
// module is checked on the programs its tools.go imports (./... holds no
// package without the tools tag).
func TestVulncheckChecksToolsModulesPrograms(t *testing.T) {
	if out := dryRun(t, "vulncheck", "GOVULNCHECK=/bin/true"); !strings.Contains(out, "tools/vulncheck.sh . integration tools/jaeger tools/prometheus") {
		t.Errorf("make vulncheck does not check every module:\n%s", out)
	}
	args := filepath.Join(t.TempDir(), "args")
	out, rc, _ := vulncheckModules(t, []string{".", "tools/prometheus"}, "FAKE_ARGS="+args)
	if rc != 0 {
		t.Fatalf("exit %d:\n%s", rc, out)
	}
	b, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.Contains(got, "tools/prometheus github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool\n") {
		t.Errorf("tools/prometheus not checked on its programs; govulncheck's arguments:\n%s", got)
	}
	if !strings.Contains(got, " ./...\n") {
		t.Errorf("the main module not checked on ./...; govulncheck's arguments:\n%s", got)
	}
}

// TestVulncheckAcceptedFindings: findings pass only when every one is
// listed, for that module, in the accepted file; one more fails.
func TestVulncheckAcceptedFindings(t *testing.T) {
	accepted := filepath.Join(t.TempDir(), "accepted")
	if err := os.WriteFile(accepted, []byte("# module id why\nintegration GO-2025-0001 unreachable in practice\n. GO-2025-0002 no fix\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"FAKE_RC=3", "VULNCHECK_ACCEPTED=" + accepted}
	out, rc, _ := vulncheckModules(t, []string{"integration"}, append(env, "FAKE_FINDINGS=GO-2025-0001")...)
	if rc != 0 || !strings.Contains(out, "all 1 findings are accepted") {
		t.Errorf("accepted finding: exit %d:\n%s", rc, out)
	}
	out, rc, _ = vulncheckModules(t, []string{"integration"}, append(env, "FAKE_FINDINGS=GO-2025-0001 GO-2025-0002")...)
	if rc != 3 || !strings.Contains(out, "GO-2025-0002 is not accepted") {
		t.Errorf("a finding accepted for another module only: exit %d, want 3:\n%s", rc, out)
	}
}

// TestVulncheckRequired: with GOVULNCHECK_REQUIRED=1 an unreachable
// database is an error, not a fallback.
func TestVulncheckRequired(t *testing.T) {
	out, rc, calls := vulncheck(t, "GOVULNCHECK_REQUIRED=1")
	if rc == 0 || len(calls) != 2 {
		t.Fatalf("exit %d, calls %v: want a failure after the first, unreachable database:\n%s", rc, calls, out)
	}
}

// TestVulncheckWithoutSnapshotSaysSkipped: no database and no snapshot is a
// loud skip, never a silent pass.
func TestVulncheckWithoutSnapshotSaysSkipped(t *testing.T) {
	out, rc, _ := vulncheck(t, "VULNDB_SNAPSHOT=/nonexistent/osv.tar.gz")
	if rc != 0 || !strings.Contains(out, "govulncheck SKIPPED") || !strings.Contains(out, "nothing was checked") {
		t.Fatalf("exit %d:\n%s", rc, out)
	}
}

// snapshotMeta reads tools/vulndb/SNAPSHOT.
func snapshotMeta(t *testing.T) map[string]string {
	t.Helper()
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "tools/vulndb/SNAPSHOT"))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		meta[k] = v
	}
	return meta
}

// TestVulndbSnapshotMatchesItsMetadata: every file of the archive is an OSV
// entry named by its id, and SNAPSHOT counts them.
func TestVulndbSnapshotMatchesItsMetadata(t *testing.T) {
	meta := snapshotMeta(t)
	root, _ := srcscan.ModuleRoot()
	f, err := os.Open(filepath.Join(root, "tools/vulndb/osv.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	entries := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		var e struct {
			ID       string `json:"id"`
			Affected []any  `json:"affected"`
		}
		if err := json.NewDecoder(tr).Decode(&e); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if filepath.Base(h.Name) != e.ID+".json" || !strings.HasPrefix(h.Name, "osv/GO-") {
			t.Errorf("%s holds entry %q", h.Name, e.ID)
		}
		entries++
	}
	if n, _ := strconv.Atoi(meta["entries"]); n != entries || n < 1000 {
		t.Errorf("SNAPSHOT says %s entries, the archive has %d", meta["entries"], entries)
	}
	if len(meta["commit"]) != 40 || meta["date"] == "" {
		t.Errorf("SNAPSHOT lacks the golang/vulndb commit or date: %v", meta)
	}
}

// TestAcceptedVulnerabilitiesAreExplained: every finding that
// tools/vulncheck.accepted lets pass names a module of the repository and
// a reason, and docs/security.md explains it by its id.
func TestAcceptedVulnerabilitiesAreExplained(t *testing.T) {
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "tools/vulncheck.accepted"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs/security.md"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 3 || !strings.HasPrefix(f[1], "GO-") {
			t.Errorf("%q: want <module> <GO id> <why it remains>", strings.TrimSpace(line))
			continue
		}
		if _, err := os.Stat(filepath.Join(root, f[0], "go.mod")); err != nil {
			t.Errorf("%s: %s is not a module of the repository", f[1], f[0])
		}
		if !strings.Contains(string(doc), f[1]) {
			t.Errorf("%s (%s) is accepted but docs/security.md does not explain it", f[1], f[0])
		}
	}
}
