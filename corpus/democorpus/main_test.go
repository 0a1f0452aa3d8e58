// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kretrieve/kretrieve/corpus"
)

// TestRunWritesTheCorpusForIngest: the file run writes (the image's demo
// corpus) is world-readable and reads back strictly, as `kretrieve ingest
// --jsonl --strict` reads it, as the Go standard library's documents; run
// twice, it writes the same bytes (a reproducible image layer).
func TestRunWritesTheCorpusForIngest(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, out := range []string{a, b} {
		if err := run(t.Context(), out, ""); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644: the image's unprivileged user reads it", st.Mode().Perm())
	}
	docs, bad, err := corpus.ReadJSONLFile(a, true)
	if err != nil || len(bad) > 0 {
		t.Fatalf("read back: %v, bad %v", err, bad)
	}
	want, err := corpus.GoStdlib(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(want) || docs[0].ID != want[0].ID {
		t.Fatalf("read back %d documents (first %s), want %d (first %s)", len(docs), docs[0].ID, len(want), want[0].ID)
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if string(x) != string(y) {
		t.Error("two runs wrote different files")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".democorpus-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestRunNeedsAnOutput: without -o, run says how to call it.
func TestRunNeedsAnOutput(t *testing.T) {
	if err := run(t.Context(), "", ""); err == nil {
		t.Fatal("no error without -o")
	}
}
