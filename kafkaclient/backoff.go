// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"time"

	"github.com/kretrieve/kretrieve/internal/backoff"
)

// Bounds of RetryBackoff: Kafka's Java client defaults, retry.backoff.ms
// and retry.backoff.max.ms (KIP-580).
const (
	MinRetryBackoff = 100 * time.Millisecond
	MaxRetryBackoff = time.Second
)

// RetryBackoff is every client's backoff before retrying a failed request
// (kgo.RetryBackoffFn), after fails consecutive failures: MinRetryBackoff
// doubling up to MaxRetryBackoff, each within ±20% (jitter, so that clients
// that failed together do not retry together), as Kafka's Java client does.
//
// franz-go's own default doubles from 250 ms up to 5 s. A client that failed
// five times while a broker restarted then waited up to 5 s more once it
// was back: in the chaos test, a worker's outputs were acknowledged 4 s
// after the broker answered again, and a revoke waiting for them held the
// whole group's rebalance (docs/operations.md, Broker restarts).
func RetryBackoff(fails int) time.Duration {
	return backoff.Proportional(backoff.Doubling(MinRetryBackoff, MaxRetryBackoff, fails-1), 0.2)
}
