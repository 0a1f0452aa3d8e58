package kafkaclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Defaults for RetryPolicy.
const (
	DefaultRetryInitial = 250 * time.Millisecond
	DefaultRetryMax     = 10 * time.Second
	// DefaultOneShotWait is how long a one-shot command (OneShot) waits
	// for the brokers to answer before it fails.
	DefaultOneShotWait = 3 * time.Second
)

// RetryPolicy says how WaitReachable retries brokers that do not answer.
// The zero value retries until the context ends, 250 ms after the first
// attempt, then doubling up to 10 s.
type RetryPolicy struct {
	// Initial is the delay after the first failed attempt; it doubles after
	// each one. Default: DefaultRetryInitial.
	Initial time.Duration
	// Max caps the delay. Default: DefaultRetryMax.
	Max time.Duration
	// GiveUpAfter ends the wait with the last error once this much time has
	// passed since it began; 0 waits until the context ends (long-running
	// commands).
	GiveUpAfter time.Duration
	// AttemptTimeout bounds each attempt (Check's timeout): an address that
	// drops packets instead of refusing them takes this long to fail.
	// Default: DefaultCheckTimeout.
	AttemptTimeout time.Duration
}

// OneShot is the policy of a command that does one job and exits: it
// retries for DefaultOneShotWait, then fails with one error naming the
// brokers, without logging each attempt.
func OneShot() RetryPolicy { return RetryPolicy{GiveUpAfter: DefaultOneShotWait} }

// UntilReachable is the policy of a long-running command (a worker, the
// gateway): it retries with backoff until the brokers answer or ctx ends,
// logging each retry at warn.
func UntilReachable() RetryPolicy { return RetryPolicy{} }

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Initial <= 0 {
		p.Initial = DefaultRetryInitial
	}
	if p.Max <= 0 {
		p.Max = DefaultRetryMax
	}
	p.Max = max(p.Max, p.Initial)
	if p.AttemptTimeout <= 0 {
		p.AttemptTimeout = DefaultCheckTimeout
	}
	return p
}

// WaitReachable runs Check against c's brokers until it succeeds, retrying
// only while no broker answers (ErrUnreachable) with a delay that starts at
// policy.Initial and doubles up to policy.Max. An authentication, TLS or
// any other error ends it at once: retrying would not fix it.
//
// Without policy.GiveUpAfter it waits until the brokers answer or ctx ends,
// and logs every retry at warn ("kafka not reachable at BROKERS, retrying
// in DELAY (attempt N)"), so a worker started before Kafka starts working
// by itself when Kafka appears. With it, retries are logged at debug only
// and the wait ends after that long with one error that matches
// ErrUnreachable and names the brokers and the attempts made.
//
// A one-shot wait takes at most GiveUpAfter plus one attempt of at most a
// second (or AttemptTimeout, if shorter). When ctx ends first, the error matches ctx's error (context.Canceled on
// a signal).
func WaitReachable(ctx context.Context, c Config, logger *slog.Logger, policy RetryPolicy) error {
	c = c.WithDefaults()
	policy = policy.withDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	brokers := strings.Join(c.Brokers, ",")
	start := time.Now()
	var deadline time.Time
	if policy.GiveUpAfter > 0 {
		deadline = start.Add(policy.GiveUpAfter)
	}
	level := slog.LevelWarn
	if !deadline.IsZero() {
		level = slog.LevelDebug
	}
	quiet := slog.New(slog.DiscardHandler)
	delay := policy.Initial
	for attempt := 1; ; attempt++ {
		timeout := policy.AttemptTimeout
		if !deadline.IsZero() {
			// At least a second: an attempt cut short at the deadline would
			// report a timeout for a connection that was refused.
			timeout = min(timeout, max(time.Until(deadline), time.Second))
		}
		// franz-go's own warnings repeat what err says: the retry record
		// and the final error carry it once.
		err := Check(ctx, c, quiet, timeout)
		switch {
		case err == nil:
			if attempt > 1 {
				logger.InfoContext(ctx, "kafka reachable", "brokers", brokers, "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond))
			}
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("kafka %s: stopped waiting for the brokers after %d attempts: %w", brokers, attempt, context.Cause(ctx))
		case !errors.Is(err, ErrUnreachable):
			return err
		}
		wait := delay
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return fmt.Errorf("%w (%d attempts in %s)", err, attempt, time.Since(start).Round(100*time.Millisecond))
			}
			wait = min(wait, left)
		}
		logger.Log(ctx, level, fmt.Sprintf("kafka not reachable at %s, retrying in %s (attempt %d)", brokers, wait, attempt),
			"brokers", brokers, "retry_in", wait, "attempt", attempt, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("kafka %s: stopped waiting for the brokers after %d attempts: %w", brokers, attempt, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(delay*2, policy.Max)
	}
}
