// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataDirOwnedByAnotherUser: a data directory the broker may not
// chmod (a volume mounted into a container running as another user)
// keeps its mode with a warning, and the broker starts; its own files in
// it are still made owner-only. The integration tier's broker container
// failed with "chmod /data: operation not permitted".
func TestDataDirOwnedByAnotherUser(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(c func(string, os.FileMode) error) { chmod = c }(chmod)
	chmod = func(path string, mode os.FileMode) error {
		if path == dir {
			return &os.PathError{Op: "chmod", Path: path, Err: syscall.EPERM}
		}
		return os.Chmod(path, mode)
	}
	logFile := filepath.Join(t.TempDir(), "broker.log")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := Start(Config{Listen: "127.0.0.1:0", DataDir: dir, Logger: slog.New(slog.NewTextHandler(f, nil))})
	if err != nil {
		t.Fatalf("start with a data dir owned by another user: %v", err)
	}
	b.Close()
	if st, err := os.Stat(filepath.Join(dir, "old.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("old.json: %v, mode %v: the broker's files must still be 0600", err, st.Mode().Perm())
	}
	logged, _ := os.ReadFile(logFile)
	if !strings.Contains(string(logged), "owned by another user") || !strings.Contains(string(logged), dir) {
		t.Errorf("no warning naming %s:\n%s", dir, logged)
	}
}
