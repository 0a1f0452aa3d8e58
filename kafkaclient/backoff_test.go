// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// TestRetryBackoff checks the bounds of every step: 100 ms doubling to 1 s,
// each within ±20%, whatever the jitter draws.
func TestRetryBackoff(t *testing.T) {
	base := map[int]time.Duration{-1: 100, 0: 100, 1: 100, 2: 200, 3: 400, 4: 800, 5: 1000, 6: 1000, 40: 1000, 1 << 30: 1000}
	for fails, ms := range base {
		want := ms * time.Millisecond
		lo, hi := want*8/10, want*12/10
		seen := map[time.Duration]bool{}
		for range 200 {
			d := kafkaclient.RetryBackoff(fails)
			if d < lo || d > hi {
				t.Fatalf("RetryBackoff(%d) = %v, want within [%v, %v]", fails, d, lo, hi)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("RetryBackoff(%d): %d distinct values in 200 draws: no jitter", fails, len(seen))
		}
	}
}
