// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain makes the tests hermetic (no OTEL_* variable from the caller's
// environment leaks in; tests set what they need with t.Setenv) and checks
// that no goroutine outlives the tests. No goleak ignores are needed: the
// OTLP/HTTP exporters' idle keep-alive connections end when the otlptest
// servers close, and goleak retries until they have.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			_ = os.Unsetenv(k)
		}
	}
	goleak.VerifyTestMain(m)
}
