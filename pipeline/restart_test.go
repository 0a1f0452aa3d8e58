// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// TestWorkersRestartMidStreamLoseNothing stops every worker gracefully while
// requests are in flight and starts new ones: every request still completes,
// because offsets are committed only after outputs are acknowledged.
func TestWorkersRestartMidStreamLoseNothing(t *testing.T) {
	h := newHarness(t, 6)
	stop := h.startWorkers()
	c := h.client(true)

	const n = 400
	var completed, failed atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		call, err := c.Start(t.Context(), messages.Request{Query: []string{"gzip", "url", "json", "tar"}[i%4]}, true)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			out, err := call.Wait(t.Context(), resultTimeout)
			if err != nil || out.Failed {
				failed.Add(1)
				t.Errorf("request %s: err %v outcome %+v", call.Request.RequestID, err, out)
				return
			}
			completed.Add(1)
		})
	}
	eventually(t, func() bool { return completed.Load() >= n/8 }, "first results")
	stop()
	mid := completed.Load()
	h.startWorkers()
	wg.Wait()
	if completed.Load() != n || failed.Load() != 0 {
		t.Fatalf("completed %d failed %d of %d", completed.Load(), failed.Load(), n)
	}
	t.Logf("restart after %d results; duplicates dropped by the collector: %d", mid, c.Collector.Duplicates())
	if mid == n {
		t.Log("note: every request completed before the restart")
	}
}
