// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"testing"
	"time"
)

// NoLoginBackoff turns off the failed-login backoff of brokers started
// during the test, which tries many failed logins from one address.
func NoLoginBackoff(t testing.TB) {
	saved := loginBackoff
	loginBackoff = [2]time.Duration{}
	t.Cleanup(func() { loginBackoff = saved })
}

// LoginDelay is how long b would hold the next login attempt from host.
func LoginDelay(b *Broker, host string) time.Duration {
	l := b.guard.limiter
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	s := l.source(host, now)
	if s == nil || s.next.Before(now) {
		return 0
	}
	return s.next.Sub(now)
}
