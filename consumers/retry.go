// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/backoff"
	"github.com/kretrieve/kretrieve/otelnames"
)

// The retry defaults (see RetryConfig, and Config's Attempts and
// RetryBackoff, which the default chain's Retry takes).
const (
	DefaultAttempts        = 3
	DefaultRetryBackoff    = 100 * time.Millisecond
	DefaultMaxRetryBackoff = 2 * time.Second
)

// RetryConfig configures Retry. A zero field takes its default.
type RetryConfig struct {
	// Attempts is how many times a transient error is tried in all,
	// counting the first. Default: 3 (DefaultAttempts).
	Attempts int
	// MinBackoff is the delay before the first retry; each later retry
	// waits twice as long as the one before, up to MaxBackoff, each with
	// equal jitter (between half of the delay and all of it). Default:
	// 100 ms (DefaultRetryBackoff).
	MinBackoff time.Duration
	// MaxBackoff caps the delay between two attempts. Default: 2 s
	// (DefaultMaxRetryBackoff).
	MaxBackoff time.Duration
}

// withDefaults returns c with its zero fields set to their defaults.
func (c RetryConfig) withDefaults() RetryConfig {
	orDefault(&c.Attempts, DefaultAttempts)
	orDefault(&c.MinBackoff, DefaultRetryBackoff)
	orDefault(&c.MaxBackoff, DefaultMaxRetryBackoff)
	return c
}

// Retry returns middleware that retries transient errors up to
// cfg.Attempts times in all, sleeping MinBackoff, 2×MinBackoff, … (at most
// MaxBackoff) between attempts, each with equal jitter (uniformly between
// half of it and all of it, so that records failing together do not retry
// together), and counting them in msg.Attempt. Each retry is an event on
// the process span, with the wait. It stops early when ctx is done.
// Permanent errors are returned at once.
func Retry(cfg RetryConfig) Middleware {
	cfg = cfg.withDefaults()
	return func(next Handler) Handler {
		return func(ctx context.Context, msg *Message) ([]*kgo.Record, error) {
			for retries := 0; ; retries++ {
				outs, err := next(ctx, msg)
				if err == nil || IsPermanent(err) || msg.Attempt >= cfg.Attempts || ctx.Err() != nil {
					return outs, err
				}
				wait := backoff.Equal(backoff.Doubling(cfg.MinBackoff, cfg.MaxBackoff, retries))
				trace.SpanFromContext(ctx).AddEvent(otelnames.EventRetry, trace.WithAttributes(
					otelnames.RetryAttempt.Int(msg.Attempt),
					otelnames.RetryError.String(err.Error()),
					otelnames.RetryBackoffMS.Float64(float64(wait)/float64(time.Millisecond)),
				))
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return nil, err
				case <-t.C:
				}
				msg.Attempt++
			}
		}
	}
}
