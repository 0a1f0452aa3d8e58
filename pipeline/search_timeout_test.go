// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/messages"
)

// TestSearchTimeoutDeadLettersTheRequest: with a search deadline too short
// for any search, the hostile query of security finding 6 (issue 16) comes
// back to the caller as a dead letter from the requests' dead-letter topic,
// its reason naming the search timeout.
func TestSearchTimeoutDeadLettersTheRequest(t *testing.T) {
	h := newHarness(t, 2)
	h.cfg.SearchTimeout = time.Nanosecond
	stop := h.startWorkers()
	defer stop()
	c := h.client(true)
	call, err := c.Start(t.Context(), messages.Request{Query: strings.Repeat("go ", 1365), TopK: 100}, true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := call.Wait(t.Context(), resultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Failed || out.Topic != messages.DLQTopic(h.cfg.Topology().Requests()) ||
		!strings.Contains(out.Reason, "search: search timeout: no answer within 1ns") {
		t.Fatalf("outcome %+v, want a dead letter for the search timeout", out)
	}
}
