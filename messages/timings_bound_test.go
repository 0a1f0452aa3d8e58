// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"testing"
	"time"
)

// TestTimingsBoundedByTheRequest: a queue time longer than the whole
// request, measured on the gateway's one clock, is clock skew between the
// stages' clocks: it is cut to the request's duration, either sign, and
// counted (issue 25, item 4).
func TestTimingsBoundedByTheRequest(t *testing.T) {
	ts := Timings{Stages: []StageTiming{
		{Stage: StageRetrieval, QueueMS: 30102, WorkMS: 3},
		{Stage: StageEnrichment, QueueMS: -29950, WorkMS: 2},
		{Stage: "rerank", QueueMS: 4, WorkMS: 1},
	}}
	got, skewed := ts.BoundQueue(50 * time.Millisecond)
	if skewed != 2 || got.Stages[0].QueueMS != 50 || got.Stages[1].QueueMS != -50 || got.Stages[2].QueueMS != 4 {
		t.Errorf("bounded %+v (%d skewed), want queue times within 50 ms", got, skewed)
	}
	if ts.Stages[0].QueueMS != 30102 {
		t.Error("BoundQueue changed its receiver's stages")
	}
}
