// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
)

// dryRun returns what `make -n target vars...` would run at the module
// root; make is a prerequisite, so its absence fails the test.
func dryRun(t *testing.T, target string, vars ...string) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not installed: it is a prerequisite (README), and these tests check the Makefile's targets")
	}
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", append([]string{"-n", "--no-print-directory", "-C", root, target}, vars...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", target, err, out)
	}
	return string(out)
}

// TestImageCrossCompilesForLinux: the image's binary is built for linux and
// IMAGE_ARCH, without cgo, whatever the host (a macOS host used to package a
// darwin binary); IMAGE_ARCH defaults to the host's.
func TestImageCrossCompilesForLinux(t *testing.T) {
	out := dryRun(t, "image", "IMAGE_ARCH=arm64")
	if !strings.Contains(out, "CGO_ENABLED=0 GOOS=linux GOARCH=arm64 ") || !strings.Contains(out, "-o build/image/kretrieve ./cmd/kretrieve") {
		t.Errorf("make image IMAGE_ARCH=arm64 does not cross-compile the image's binary:\n%s", out)
	}
	host, err := exec.Command("go", "env", "GOARCH").Output()
	if err != nil {
		t.Fatal(err)
	}
	if out := dryRun(t, "image"); !strings.Contains(out, "GOOS=linux GOARCH="+strings.TrimSpace(string(host))+" ") {
		t.Errorf("make image does not default to the host's architecture %s:\n%s", host, out)
	}
}

// TestLintRunsTheLinters: make lint vets both modules (integration/ with
// its build tag) and runs staticcheck on both and govulncheck, the linters
// installed at pinned versions from the module proxy.
func TestLintRunsTheLinters(t *testing.T) {
	out := dryRun(t, "lint", "TOOLS_BIN=/nonexistent/tools")
	for _, want := range []string{
		"go vet ./...",
		"cd integration && go vet -tags integration ./...",
		"go install honnef.co/go/tools/cmd/staticcheck@v",
		"/nonexistent/tools/staticcheck-v",
		"cd integration && /nonexistent/tools/staticcheck-v",
		"go install golang.org/x/vuln/cmd/govulncheck@v",
		"tools/vulncheck.sh . integration",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("make lint does not run %q:\n%s", want, out)
		}
	}
}

// TestMainModuleLeavesTestcontainersToIntegration: testcontainers-go and
// the Docker client are required by integration/go.mod only.
func TestMainModuleLeavesTestcontainersToIntegration(t *testing.T) {
	root, err := srcscan.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	main, integration := read("go.mod"), read("integration/go.mod")
	for _, dep := range []string{"github.com/testcontainers/testcontainers-go", "github.com/moby/moby"} {
		if strings.Contains(main, dep) {
			t.Errorf("go.mod requires %s: it belongs to integration/go.mod", dep)
		}
		if !strings.Contains(integration, dep) {
			t.Errorf("integration/go.mod lacks %s", dep)
		}
	}
	if !strings.Contains(integration, "replace github.com/kretrieve/kretrieve => ../") {
		t.Error("integration/go.mod does not test this checkout (replace github.com/kretrieve/kretrieve => ../)")
	}
}

// TestIntegrationBuildsTheTelemetryImages: the container tier builds the
// collector (Collector Builder) and Prometheus (Go module) it runs, and
// passes their tags to the tests.
func TestIntegrationBuildsTheTelemetryImages(t *testing.T) {
	out := dryRun(t, "integration", "OTELCOL_IMAGE=x/otelcol:t", "PROMETHEUS_IMAGE=x/prometheus:t")
	for _, want := range []string{
		"OTELCOL_IMAGE_TAG=x/otelcol:t tools/otelcol/build.sh",
		"PROMETHEUS_IMAGE_TAG=x/prometheus:t tools/prometheus/build.sh",
		"OTELCOL_IMAGE=x/otelcol:t PROMETHEUS_IMAGE=x/prometheus:t",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("make integration does not run %q:\n%s", want, out)
		}
	}
}
