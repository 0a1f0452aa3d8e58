// SPDX-License-Identifier: Apache-2.0

// Package kafkapython finds a python3 with kafka-python (Debian's
// python3-kafka) for the tests that run Python clients against kretrieve.
package kafkapython

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv names the variable that makes a missing kafka-python fail the
// test instead of skipping it: .ci/run sets it, so CI cannot pass without
// running the tests that need it.
const RequireEnv = "KRETRIEVE_TEST_REQUIRE_KAFKA_PYTHON"

// Python returns a python3 that has kafka-python. Without one the test is
// skipped, or fails when RequireEnv is set; what says what the test needed it for.
func Python(t testing.TB, what string) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import kafka").Run() == nil {
			return p
		}
	}
	why := "no python3 with kafka-python (Debian: apt-get install python3-kafka; .ci/run installs it): " + what + " cannot run"
	if os.Getenv(RequireEnv) != "" {
		t.Fatal(why + "; " + RequireEnv + " is set")
	}
	t.Skip(why)
	return ""
}
