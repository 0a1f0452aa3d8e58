// SPDX-License-Identifier: Apache-2.0

package results

import (
	"testing"
	"time"
)

func newTestCollector() *Collector {
	return &Collector{waiting: make(map[string]waiter), delivered: make(map[string]seen), abandoned: make(map[string]seen)}
}

func TestCollectorDeliversOnceAndCountsDuplicates(t *testing.T) {
	c := newTestCollector()
	ch := c.Expect("a")
	c.deliver(Outcome{RequestID: "a", Topic: "retrieval.results"})
	c.deliver(Outcome{RequestID: "a", Topic: "retrieval.results"})                      // redelivered result
	c.deliver(Outcome{RequestID: "a", Failed: true, Topic: "retrieval.candidates.dlq"}) // later dead letter
	c.deliver(Outcome{RequestID: "someone-else"})
	select {
	case out := <-ch:
		if out.Failed || out.RequestID != "a" {
			t.Fatalf("outcome %+v", out)
		}
	default:
		t.Fatal("no outcome delivered")
	}
	select {
	case out := <-ch:
		t.Fatalf("second outcome delivered: %+v", out)
	default:
	}
	if c.Duplicates() != 2 || c.Unexpected() != 1 {
		t.Fatalf("duplicates %d unexpected %d", c.Duplicates(), c.Unexpected())
	}
}

func TestCollectorForget(t *testing.T) {
	c := newTestCollector()
	c.Expect("a")
	c.Forget("a")
	c.deliver(Outcome{RequestID: "a"})
	if c.Late() != 1 || c.Unexpected() != 0 {
		t.Fatalf("late %d unexpected %d after Forget", c.Late(), c.Unexpected())
	}
}

func TestCollectorForgetsOldDeliveries(t *testing.T) {
	c := newTestCollector()
	c.delivered["old"] = seen{at: time.Now().Add(-2 * dedupWindow)}
	for i := range 1024 {
		id := string(rune('a'+i%26)) + time.Duration(i).String()
		c.Expect(id)
		c.deliver(Outcome{RequestID: id})
	}
	if _, ok := c.delivered["old"]; ok {
		t.Fatal("delivered ids older than the dedup window are kept forever")
	}
}

// Security #2: an outcome is handed only to the call whose correlation value
// it carries; one without it, or with another, is foreign.
func TestCollectorMatchesTheCorrelationValue(t *testing.T) {
	c := newTestCollector()
	ch, err := c.Claim("a", "n1")
	if err != nil {
		t.Fatal(err)
	}
	c.deliver(Outcome{RequestID: "a"})             // no correlation header
	c.deliver(Outcome{RequestID: "a", corr: "n2"}) // another call's
	select {
	case out := <-ch:
		t.Fatalf("foreign outcome delivered: %+v", out)
	default:
	}
	if c.Unexpected() != 2 {
		t.Fatalf("unexpected %d, want 2", c.Unexpected())
	}
	c.deliver(Outcome{RequestID: "a", corr: "n1", Topic: "retrieval.results"})
	select {
	case out := <-ch:
		if out.RequestID != "a" {
			t.Fatalf("outcome %+v", out)
		}
	default:
		t.Fatal("own outcome not delivered")
	}
	c.deliver(Outcome{RequestID: "a", corr: "n1"})
	if c.Duplicates() != 1 {
		t.Fatalf("duplicates %d, want 1", c.Duplicates())
	}
}

// Security #2: a request id waited for, or delivered within the window, is
// refused; one whose waiter gave up may be used again.
func TestCollectorClaimRefusesIDsInUse(t *testing.T) {
	c := newTestCollector()
	if _, err := c.Claim("a", "n1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim("a", "n2"); err != ErrRequestIDInUse {
		t.Fatalf("in flight: err %v", err)
	}
	c.deliver(Outcome{RequestID: "a", corr: "n1"})
	if _, err := c.Claim("a", "n3"); err != ErrRequestIDInUse {
		t.Fatalf("delivered: err %v", err)
	}
	c.delivered["a"] = seen{corr: "n1", at: time.Now().Add(-2 * dedupWindow)}
	if _, err := c.Claim("a", "n4"); err != nil {
		t.Fatalf("after the window: err %v", err)
	}
	c.ForgetClaim("a", "n4")
	if _, err := c.Claim("a", "n5"); err != nil {
		t.Fatalf("after a timeout: err %v", err)
	}
	c.deliver(Outcome{RequestID: "a", corr: "n4"}) // the timed-out call's reply
	if c.Unexpected() != 1 || c.Late() != 0 {
		t.Fatalf("unexpected %d late %d", c.Unexpected(), c.Late())
	}
}

// ClaimFunc hands the outcome with its correlation value to the function,
// once, outside the collector's lock (the function may call the collector);
// a foreign one and a duplicate are not handed over.
func TestCollectorClaimFuncHandsTheOutcomeOver(t *testing.T) {
	c := newTestCollector()
	var got []Outcome
	err := c.ClaimFunc("a", "n1", func(out Outcome) {
		got = append(got, out)
		if err := c.CheckUnused("a"); err != ErrRequestIDInUse { // would deadlock under the lock
			t.Errorf("CheckUnused after delivery: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ClaimFunc("a", "n2", func(Outcome) {}); err != ErrRequestIDInUse {
		t.Fatalf("second claim: err %v", err)
	}
	c.deliver(Outcome{RequestID: "a", corr: "n2"})
	c.deliver(Outcome{RequestID: "a", corr: "n1", Topic: "retrieval.results"})
	c.deliver(Outcome{RequestID: "a", corr: "n1"})
	if len(got) != 1 || got[0].Topic != "retrieval.results" || c.Unexpected() != 1 || c.Duplicates() != 1 {
		t.Fatalf("handed %+v, unexpected %d, duplicates %d", got, c.Unexpected(), c.Duplicates())
	}
	if err := c.ClaimFunc("b", "n1", func(Outcome) { t.Error("forgotten claim handed an outcome") }); err != nil {
		t.Fatal(err)
	}
	c.ForgetClaim("b", "n1")
	c.deliver(Outcome{RequestID: "b", corr: "n1"})
	if c.Late() != 1 {
		t.Fatalf("late %d, want 1", c.Late())
	}
}
