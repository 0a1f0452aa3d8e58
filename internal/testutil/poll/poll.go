// SPDX-License-Identifier: Apache-2.0

// Package poll waits in tests for a condition to become true, checking it
// at a short interval until a deadline, so that tests wait for events
// instead of sleeping a guessed time.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until checks its condition.
const Interval = 5 * time.Millisecond

// Wait checks cond every Interval until it returns true, and reports
// whether it did before timeout passed.
func Wait(timeout time.Duration, cond func() bool) bool {
	return WaitEvery(timeout, Interval, cond)
}

// WaitEvery is Wait checking every interval: for conditions that cost a
// request to another process (an HTTP API, a container).
func WaitEvery(timeout, interval time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if cond() {
				return true
			}
		case <-deadline.C:
			return cond()
		}
	}
}

// Until is Wait, failing the test with the formatted message when timeout
// passes first. It must be called from the test's goroutine.
func Until(tb testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	tb.Helper()
	if !Wait(timeout, cond) {
		tb.Fatalf("timed out after %v waiting: "+format, append([]any{timeout}, args...)...)
	}
}
