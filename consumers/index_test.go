// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/messages"
)

// reporter reports a fixed freshness.
type reporter struct {
	position int64
	newest   time.Time
	ok       bool
}

func (r reporter) Freshness() (int64, time.Time, bool) { return r.position, r.newest, r.ok }

func TestWithFreshness(t *testing.T) {
	now := time.Now()
	received := messages.IndexFreshness{{Stage: "retrieval", Position: 1, NewestDocumentAgeMS: 2}}
	good := reporter{position: 42, newest: now.Add(-1500 * time.Millisecond), ok: true}

	got := consumers.WithFreshness(received, good, "enrichment", now)
	want := messages.StageFreshness{Stage: "enrichment", Position: 42, NewestDocumentAgeMS: 1500}
	if len(got) != 2 || got[0] != received[0] || got[1] != want || len(received) != 1 {
		t.Fatalf("got %+v (received now %+v), want %+v appended", got, received, want)
	}
	for name, index := range map[string]any{
		"not a reporter":    struct{}{},
		"nothing to report": reporter{position: 42, newest: now},
		"negative position": reporter{position: -1, newest: now, ok: true},
		"zero newest":       reporter{position: 42, ok: true},
	} {
		if got := consumers.WithFreshness(received, index, "enrichment", now); len(got) != 1 || got[0] != received[0] {
			t.Errorf("%s: %+v, want received unchanged", name, got)
		}
	}

	full := make(messages.IndexFreshness, messages.MaxStages)
	for i := range full {
		full[i] = messages.StageFreshness{Stage: "s" + strconv.Itoa(i)}
	}
	if got := consumers.WithFreshness(full, good, "enrichment", now); len(got) != messages.MaxStages {
		t.Errorf("a full list grew to %d entries", len(got))
	}
	if got := consumers.WithFreshness(full, good, "s3", now); len(got) != messages.MaxStages || got[3].Position != 42 {
		t.Errorf("a full list with the stage's entry: %+v, want it replaced", got[3])
	}
	if _, err := messages.EncodeResult(messages.Result{RequestID: "r", IndexFreshness: consumers.WithFreshness(full, good, "x", now)}); err != nil {
		t.Errorf("stamped full list does not encode: %v", err)
	}
}
