// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestLoginLimiterBacksOffPerSource: the Nth failed login from a source
// makes its next attempt wait base·2^(N-1), at most max; parallel
// attempts queue; other sources never wait; failures are forgotten.
func TestLoginLimiterBacksOffPerSource(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	l := newLoginLimiter(clock.now)
	const src, other = "192.0.2.1", "192.0.2.2"
	if d := l.reserve(src); d != 0 {
		t.Fatalf("first attempt waits %v", d)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	for n, w := range want {
		l.fail(src)
		if d := l.reserve(src); d != w {
			t.Fatalf("after %d failures the next attempt waits %v, want %v", n+1, d, w)
		}
		if d := l.reserve(other); d != 0 {
			t.Fatalf("another source waits %v", d)
		}
		clock.advance(w) // the attempt starts when allowed, then fails
	}
	// Parallel attempts from src queue one penalty apart.
	if a, b := l.reserve(src), l.reserve(src); a != 5*time.Second || b != 10*time.Second {
		t.Fatalf("parallel attempts wait %v and %v, want 5s and 10s", a, b)
	}
	clock.advance(loginBackoffForget + time.Minute)
	if d := l.reserve(src); d != 0 {
		t.Fatalf("failures not forgotten: waits %v", d)
	}
}
