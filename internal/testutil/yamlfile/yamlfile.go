// SPDX-License-Identifier: Apache-2.0

// Package yamlfile reads a YAML file into a value for tests, failing the
// test with the file's name when it cannot.
package yamlfile

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Read decodes file into v, or fails tb.
func Read(tb testing.TB, file string, v any) {
	tb.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
}
