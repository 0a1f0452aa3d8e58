// SPDX-License-Identifier: Apache-2.0

// Package backoff is the one home of kretrieve's retry delays: a delay that
// doubles from a first value up to a cap, and the jitter that spreads
// retries that failed together (clients of a restarted broker, partitions
// of a refusing one, records retried in step) so that they do not come
// back at once.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Doubling returns first doubled n times, at most limit: first, 2×first,
// 4×first, … for n = 0, 1, 2, …; n below 0 counts as 0. It does not
// overflow: a doubling past limit is limit.
func Doubling(first, limit time.Duration, n int) time.Duration {
	if first >= limit {
		return limit
	}
	d := max(first, 0)
	for ; n > 0 && d > 0 && d < limit; n-- {
		if d > limit/2 {
			return limit
		}
		d *= 2
	}
	return min(d, limit)
}

// Equal is d with equal jitter: uniformly within [d/2, d]. A delay bounded
// by a cap stays within it; half of it is always waited.
func Equal(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// Proportional is d within ±frac of itself, uniformly ([d×(1−frac),
// d×(1+frac)]), as Kafka's Java client jitters its backoffs (frac 0.2).
func Proportional(d time.Duration, frac float64) time.Duration {
	return time.Duration(float64(d) * (1 - frac + 2*frac*rand.Float64()))
}
