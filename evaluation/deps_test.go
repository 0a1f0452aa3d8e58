package evaluation

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependsOnNoKafkaNorOTelSDK backs the package doc's claim: the offline
// evaluation depends on no Kafka client and not on the OpenTelemetry SDK.
func TestDependsOnNoKafkaNorOTelSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !strings.Contains(string(out), "github.com/kretrieve/kretrieve/rerank") {
		t.Fatalf("go list -deps lists no kretrieve/rerank among %d packages: not the dependencies of this package", len(deps))
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/twmb/franz-go") || strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") {
			t.Errorf("evaluation depends on %s", dep)
		}
	}
}
