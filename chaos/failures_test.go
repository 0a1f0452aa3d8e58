// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// failureLog is a testing.TB that keeps every failure's message and, when
// the test ends failed, logs them all again as its last lines. The chaos
// test logs a long timeline and report after its checks, so a CI excerpt
// of the log's tail showed the summary but not which check had failed.
type failureLog struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

// repeatFailures wraps t; its failures are repeated at the end of the log.
func repeatFailures(t *testing.T) *failureLog {
	f := &failureLog{TB: t}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if t.Failed() && len(f.msgs) > 0 {
			t.Logf("%d failed checks, repeated:\n  %s", len(f.msgs), strings.Join(f.msgs, "\n  "))
		}
	})
	return f
}

func (f *failureLog) keep(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, msg)
}

// Error records and reports a failure.
func (f *failureLog) Error(args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprint(args...))
	f.TB.Error(args...)
}

// Errorf records and reports a failure.
func (f *failureLog) Errorf(format string, args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprintf(format, args...))
	f.TB.Errorf(format, args...)
}

// Fatal records and reports a failure, and stops the test.
func (f *failureLog) Fatal(args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprint(args...))
	f.TB.Fatal(args...)
}

// Fatalf records and reports a failure, and stops the test.
func (f *failureLog) Fatalf(format string, args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprintf(format, args...))
	f.TB.Fatalf(format, args...)
}
