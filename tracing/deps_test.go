// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOfKretrieve backs the package doc: of kretrieve, tracing
// imports only internal/otlpwire, kafkatrace, pathway and otelnames.
func TestImportsOfKretrieve(t *testing.T) {
	ours := depcheck.OwnImports(t, false)
	depcheck.OnlyImports(t, ours, "", depcheck.Module+"/internal/otlpwire", depcheck.Module+"/kafkatrace",
		depcheck.Module+"/pathway", depcheck.Module+"/otelnames")
}

// TestWhoImportsTheSDK backs the package doc: of the module's packages,
// only tracing, its exporter internal/otlpwire and the operator's wing's
// ops/spans (the span record, read from the SDK's spans), ops/runsummary
// (a span processor) and the benchmarks' harness bench/relay import the
// OTel SDK (tests aside).
func TestWhoImportsTheSDK(t *testing.T) {
	allowed := map[string]bool{}
	for _, p := range []string{"tracing", "internal/otlpwire", "ops/spans", "ops/runsummary", "bench/relay"} {
		allowed[depcheck.Module+"/"+p] = true
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, depcheck.Module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "go.opentelemetry.io/otel/sdk") && !allowed[f[0]] {
				t.Errorf("%s imports %s", f[0], imp)
			}
		}
	}
}
