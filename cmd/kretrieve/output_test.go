// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateOutputRefusesSymlink: an output file named by a symlink is
// refused and the link's target is untouched (security #16, finding 8:
// --spans-file and --summary-json followed the link and truncated its
// target).
func TestCreateOutputRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "out.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f, err := createOutput(link, nil)
	if err == nil {
		f.Close()
		t.Fatal("createOutput wrote through a symlink")
	}
	if !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("error %q does not name the path and the symlink", err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep me\n" {
		t.Fatalf("symlink target changed: %q %v", b, err)
	}

	// Through the run command: --summary-json and --spans-file.
	for _, flag := range []string{"--summary-json", "--spans-file"} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"run", "--requests", "0", "--log-level", "warn", flag, link}, mapEnv(nil), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("run %s SYMLINK: err %v\n%s", flag, err, stderr.String())
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != "keep me\n" {
			t.Fatalf("run %s: symlink target changed: %q %v", flag, b, err)
		}
	}
}

// TestCreateOutputPrivate: output files are created 0600 (spans and
// summaries may hold query text); an existing file is truncated and made
// private; "-" is stdout.
func TestCreateOutputPrivate(t *testing.T) {
	dir := t.TempDir()
	fresh, existing := filepath.Join(dir, "fresh"), filepath.Join(dir, "existing")
	if err := os.WriteFile(existing, []byte("old content, longer than the new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, existing} {
		f, err := createOutput(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("new\n")); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, fi.Mode().Perm())
		}
		if b, _ := os.ReadFile(path); string(b) != "new\n" {
			t.Errorf("%s: content %q", path, b)
		}
	}
	var stdout bytes.Buffer
	f, err := createOutput(toStdout, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	if err := f.Close(); err != nil || stdout.String() != "x" {
		t.Fatalf("-: %q %v", stdout.String(), err)
	}
}
