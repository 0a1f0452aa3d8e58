// SPDX-License-Identifier: Apache-2.0

package evaluation

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOfflineDependencies backs the package docs of evaluation and of
// rerank, the ranking it measures: go list -deps finds no Kafka client and
// no OpenTelemetry SDK under evaluation, and no OpenTelemetry at all under
// rerank.
func TestOfflineDependencies(t *testing.T) {
	const franz, otel, otelSDK = "github.com/twmb/franz-go", "go.opentelemetry.io/", "go.opentelemetry.io/otel/sdk"
	for _, c := range []struct {
		pkg       string
		forbidden []string
	}{
		{"github.com/kretrieve/kretrieve/evaluation", []string{franz, otelSDK}},
		{"github.com/kretrieve/kretrieve/rerank", []string{franz, otel}},
	} {
		list, err := exec.Command("go", "list", "-deps", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		deps := strings.Fields(string(list))
		if len(deps) == 0 || deps[len(deps)-1] != c.pkg {
			t.Fatalf("go list -deps %s ends with %v, not with the package itself", c.pkg, deps[max(len(deps)-1, 0):])
		}
		for _, dep := range deps {
			for _, prefix := range c.forbidden {
				if strings.HasPrefix(dep, prefix) {
					t.Errorf("%s depends on %s", c.pkg, dep)
				}
			}
		}
	}
}
