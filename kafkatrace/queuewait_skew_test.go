// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestQueueWaitSignedKeepsSkew: a record stamped after its processing
// started (the producer's clock ahead) has a negative signed wait, not a
// silent 0: timings report it as the skew it is (issue 25, item 4).
func TestQueueWaitSignedKeepsSkew(t *testing.T) {
	now := time.Now()
	qw := ComputeQueueWait(&kgo.Record{Timestamp: now.Add(30 * time.Second)}, now)
	if got := qw.Signed(); got > -29*time.Second {
		t.Errorf("signed wait %s, want about -30s", got)
	}
	qw = ComputeQueueWait(&kgo.Record{Timestamp: now.Add(-time.Second)}, now)
	if got := qw.Signed(); got != time.Second {
		t.Errorf("signed wait %s, want 1s", got)
	}
}
