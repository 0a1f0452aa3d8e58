package pathway

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyTheOTelAPI backs the package doc's claim: nothing the
// package depends on is the OpenTelemetry SDK (or a Kafka client).
func TestImportsOnlyTheOTelAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(dep, "go.opentelemetry.io/otel/exporters") || strings.HasPrefix(dep, "github.com/twmb/franz-go") {
			t.Errorf("pathway depends on %s", dep)
		}
	}
}
