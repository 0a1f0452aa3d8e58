// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"log/slog"
	"sync"
	"time"
)

// Defaults of the bounds on connections that have not authenticated yet
// (Config.AuthTimeout, MaxUnauthenticated, MaxUnauthenticatedPerHost): a
// real client logs in within milliseconds (or the login backoff's 5 s);
// kretrieve's processes hold a handful of connections each.
const (
	DefaultAuthTimeout               = 10 * time.Second
	DefaultMaxUnauthenticated        = 256
	DefaultMaxUnauthenticatedPerHost = 32
)

// gateLogEvery spaces the gate's warnings: a flood of refused or timed-out
// connections logs one line a minute with the count since the last.
const gateLogEvery = time.Minute

// authGate bounds the connections of a SASL broker that have not
// authenticated yet: how many (in all and per source host) and for how
// long. Without it, silent connections could take every file descriptor
// and lock real clients out.
type authGate struct {
	timeout           time.Duration
	maxTotal, maxHost int
	logger            *slog.Logger
	mu                sync.Mutex
	total             int
	perHost           map[string]int
	refused, timedOut gateLog
}

// gateLog rate-limits one kind of warning.
type gateLog struct {
	last  time.Time
	since int // events not logged since last
}

func newAuthGate(cfg Config, logger *slog.Logger) *authGate {
	g := &authGate{timeout: cfg.AuthTimeout, maxTotal: cfg.MaxUnauthenticated, maxHost: cfg.MaxUnauthenticatedPerHost,
		logger: logger, perHost: map[string]int{}}
	if g.timeout == 0 {
		g.timeout = DefaultAuthTimeout
	}
	if g.maxTotal == 0 {
		g.maxTotal = DefaultMaxUnauthenticated
	}
	if g.maxHost == 0 {
		g.maxHost = DefaultMaxUnauthenticatedPerHost
	}
	return g
}

// admit takes an unauthenticated slot for a connection from host, or
// reports that the caps are reached.
func (g *authGate) admit(host string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.total >= g.maxTotal || g.perHost[host] >= g.maxHost {
		g.note(&g.refused, "broker: refused a connection: too many connections have not authenticated yet",
			"source", host, "max_unauthenticated", g.maxTotal, "max_unauthenticated_per_host", g.maxHost)
		return false
	}
	g.total++
	g.perHost[host]++
	return true
}

// release gives back a slot admit took.
func (g *authGate) release(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if g.perHost[host]--; g.perHost[host] <= 0 {
		delete(g.perHost, host)
	}
}

// expired logs that a connection from host did not authenticate in time.
func (g *authGate) expired(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.note(&g.timedOut, "broker: closed a connection that did not authenticate in time",
		"source", host, "auth_timeout", g.timeout.String())
}

// note logs msg at WARN unless l logged within gateLogEvery; the line
// counts the events left unlogged since. Called with g.mu held.
func (g *authGate) note(l *gateLog, msg string, args ...any) {
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < gateLogEvery {
		l.since++
		return
	}
	g.logger.Warn(msg, append(args, "unlogged_since_last", l.since, "component", "broker")...)
	l.last, l.since = now, 0
}
