// SPDX-License-Identifier: Apache-2.0

package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: every write of many goroutines is kept, and Bytes
// is a copy the buffer's later writes do not change.
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Fatalf("got %d bytes, want 800", len(got))
	}
	snap := b.Bytes()
	_, _ = b.Write([]byte("y"))
	if len(snap) != 800 || strings.Contains(string(snap), "y") {
		t.Errorf("Bytes is not a copy: %q", snap[len(snap)-3:])
	}
}
