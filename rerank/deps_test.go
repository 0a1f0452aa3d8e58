package rerank

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependsOnNoKafkaNorOTel backs the package doc's claim: nothing the
// package depends on is a Kafka client or OpenTelemetry.
func TestDependsOnNoKafkaNorOTel(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !strings.Contains(string(out), "github.com/kretrieve/kretrieve/search") {
		t.Fatalf("go list -deps lists no kretrieve/search among %d packages: not the dependencies of this package", len(deps))
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/twmb/franz-go") || strings.HasPrefix(dep, "go.opentelemetry.io/") {
			t.Errorf("rerank depends on %s", dep)
		}
	}
}
