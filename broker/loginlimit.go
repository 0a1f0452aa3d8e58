// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"sync"
	"time"
)

// Login backoff defaults: the first failed login from a source costs its
// next attempt 100 ms, each further one doubles that up to 5 s, and a
// source's failures are forgotten 10 minutes after its last one.
const (
	loginBackoffBase   = 100 * time.Millisecond
	loginBackoffMax    = 5 * time.Second
	loginBackoffForget = 10 * time.Minute
	// loginSourcesPruneAt is the number of sources above which forgotten
	// ones are dropped when another fails.
	loginSourcesPruneAt = 4096
)

// loginLimiter slows down failed SASL logins per source address. Each
// login attempt from a source with failures reserves a slot of the
// source's current penalty, so attempts on parallel connections queue
// behind each other instead of running side by side; other sources are
// not affected.
type loginLimiter struct {
	base, max, forget time.Duration
	now               func() time.Time

	mu      sync.Mutex
	sources map[string]*loginSource
}

type loginSource struct {
	failures int
	last     time.Time // the last failure
	next     time.Time // when the next attempt may start
}

// loginBackoff is the base and maximum penalty of new limiters; tests of
// other behaviour turn it off (export_test.go).
var loginBackoff = [2]time.Duration{loginBackoffBase, loginBackoffMax}

func newLoginLimiter(now func() time.Time) *loginLimiter {
	return &loginLimiter{base: loginBackoff[0], max: loginBackoff[1], forget: loginBackoffForget,
		now: now, sources: map[string]*loginSource{}}
}

// penalty is the spacing of attempts after n failures.
func (l *loginLimiter) penalty(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := l.base << min(n-1, 32)
	if d <= 0 || d > l.max {
		d = l.max
	}
	return d
}

// source returns src's state, nil if it has no failures to remember.
func (l *loginLimiter) source(src string, now time.Time) *loginSource {
	s := l.sources[src]
	if s != nil && now.Sub(s.last) > l.forget {
		delete(l.sources, src)
		return nil
	}
	return s
}

// reserve books a login attempt from src and returns how long it must
// wait before it starts.
func (l *loginLimiter) reserve(src string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	s := l.source(src, now)
	if s == nil {
		return 0
	}
	at := s.next
	if at.Before(now) {
		at = now
	}
	s.next = at.Add(l.penalty(s.failures))
	return at.Sub(now)
}

// fail records a failed login from src.
func (l *loginLimiter) fail(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	s := l.source(src, now)
	if s == nil {
		if len(l.sources) >= loginSourcesPruneAt {
			for k, v := range l.sources {
				if now.Sub(v.last) > l.forget {
					delete(l.sources, k)
				}
			}
		}
		s = &loginSource{}
		l.sources[src] = s
	}
	s.failures++
	s.last = now
	if next := now.Add(l.penalty(s.failures)); next.After(s.next) {
		s.next = next
	}
}
