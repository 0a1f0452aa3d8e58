package producer

import (
	"testing"
	"time"
)

func newTestCollector() *Collector {
	return &Collector{waiting: make(map[string]chan Outcome), delivered: make(map[string]time.Time), abandoned: make(map[string]time.Time)}
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
	c.delivered["old"] = time.Now().Add(-2 * dedupWindow)
	for i := range 1024 {
		id := string(rune('a'+i%26)) + time.Duration(i).String()
		c.Expect(id)
		c.deliver(Outcome{RequestID: id})
	}
	if _, ok := c.delivered["old"]; ok {
		t.Fatal("delivered ids older than the dedup window are kept forever")
	}
}
