// SPDX-License-Identifier: Apache-2.0

package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTrue(t *testing.T) {
	var n atomic.Int32
	Until(t, time.Second, func() bool { return n.Add(1) >= 3 }, "never")
	if n.Load() != 3 {
		t.Fatalf("condition checked %d times, want 3", n.Load())
	}
}

type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(r) // stop, as Fatalf's Goexit would
}

func TestUntilFailsAtTheDeadline(t *testing.T) {
	r := &recorder{TB: t}
	start := time.Now()
	func() {
		defer func() { _ = recover() }()
		Until(r, 30*time.Millisecond, func() bool { return false }, "the %s", "thing")
	}()
	if r.failed == "" || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("failed %q after %v", r.failed, time.Since(start))
	}
}
