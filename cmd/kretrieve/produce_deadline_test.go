// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/messages"
)

// TestProduceWaitSetsTheDeadline: `produce --wait --timeout D` sends its
// requests with the deadline it waits until (sent + D) and gives up then;
// `produce` without --wait (nobody waits) sends none. No worker runs.
func TestProduceWaitSetsTheDeadline(t *testing.T) {
	const timeout = time.Second
	b := brokertest.NewBroker(t, 1)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn"})
	var stdout, stderr bytes.Buffer
	before := time.Now()
	if err := run(t.Context(), []string{"produce", "--wait", "--timeout", timeout.String(), "waited for"}, env, &stdout, &stderr); err == nil {
		t.Fatal("produce --wait succeeded without workers")
	}
	if took := time.Since(before); took > timeout+5*time.Second {
		t.Errorf("produce --wait took %s with --timeout %s", took, timeout)
	}
	if err := run(t.Context(), []string{"produce", "fire and forget"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("produce: %v\n%s", err, stderr.String())
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics(messages.DefaultRequestsTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for len(recs) < 2 && ctx.Err() == nil {
		recs = append(recs, cl.PollFetches(ctx).Records()...)
	}
	if len(recs) != 2 {
		t.Fatalf("%d requests, want 2", len(recs))
	}
	if bytes.Contains(recs[0].Value, []byte("fire and forget")) {
		recs[0], recs[1] = recs[1], recs[0] // the partitions' order is arbitrary
	}
	deadlines := func(r *kgo.Record) (vals []string) {
		for _, h := range r.Headers {
			if h.Key == messages.HeaderDeadline {
				vals = append(vals, string(h.Value))
			}
		}
		return vals
	}
	waited := deadlines(recs[0])
	if len(waited) != 1 {
		t.Fatalf("produce --wait: deadline headers %q, want one", waited)
	}
	d, _, err := messages.ParseDeadline([]byte(waited[0]), time.Now())
	if err != nil || d.Before(before.Add(timeout).Truncate(time.Millisecond)) || d.After(recs[0].Timestamp.Add(timeout+time.Second)) {
		t.Errorf("produce --wait deadline %v (%v), want --timeout after sending (%v)", d, err, recs[0].Timestamp.Add(timeout))
	}
	if got := deadlines(recs[1]); len(got) != 0 {
		t.Errorf("produce without --wait: deadline %q, want none", got)
	}
}
