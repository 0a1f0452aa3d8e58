// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeService is the part of a compose.yaml service this tier reuses, so
// that it runs the telemetry services the way compose does.
type composeService struct {
	Command     []string          `yaml:"command"`
	Volumes     []string          `yaml:"volumes"`
	Environment map[string]string `yaml:"environment"`
	MemLimit    string            `yaml:"mem_limit"`
}

// composeServiceOf reads service name from the repository's compose.yaml
// (YAML anchors and merge keys resolved).
func composeServiceOf(t *testing.T, name string) composeService {
	t.Helper()
	b, err := os.ReadFile("../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	s, ok := f.Services[name]
	if !ok {
		t.Fatalf("compose.yaml has no service %q", name)
	}
	return s
}

// binds returns the service's bind mounts of repository files as docker
// binds (host path absolute); named volumes are left out.
func (s composeService) binds(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, v := range s.Volumes {
		if !strings.HasPrefix(v, "./") {
			continue
		}
		host, rest, _ := strings.Cut(v, ":")
		abs, err := filepath.Abs(filepath.Join("..", host))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Fatalf("compose mounts %s: %v", host, err)
		}
		out = append(out, abs+":"+rest)
	}
	if len(out) == 0 {
		t.Fatal("compose mounts no repository file into the service")
	}
	return out
}

// memLimit returns mem_limit in bytes (compose's 512m form); 0 if unset.
func (s composeService) memLimit(t *testing.T) int64 {
	t.Helper()
	if s.MemLimit == "" {
		return 0
	}
	units := map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}
	v, unit := s.MemLimit, int64(1)
	if u, ok := units[v[len(v)-1]]; ok {
		v, unit = v[:len(v)-1], u
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("mem_limit %q: %v", s.MemLimit, err)
	}
	return n * unit
}
