// SPDX-License-Identifier: Apache-2.0

package producer

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/topology"
)

// TestWaitReturnsAnOutcomeDeliveredAtTheDeadline: an outcome the collector
// handed over as the wait's time ran out is returned, never dropped while
// the caller is told it timed out (a gateway had answered 504 for a result
// it held, counted neither answered nor late).
func TestWaitReturnsAnOutcomeDeliveredAtTheDeadline(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	topo := topology.Default(messages.DefaultTopics())
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := kafkaclient.EnsureTopics(t.Context(), cl, kafkaclient.Config{}, topo.All()...); err != nil {
		t.Fatal(err)
	}
	col, err := results.NewCollector(t.Context(), []kgo.Opt{kgo.SeedBrokers(b.Addr())}, kafkatrace.New(), topo)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		ch := make(chan results.Outcome, 1)
		ch <- results.Outcome{RequestID: "r", Topic: topo.Results()}
		acked := make(chan error, 1)
		acked <- nil
		call := &Call{Request: messages.Request{RequestID: "r"}, span: trace.SpanFromContext(context.Background()),
			acked: acked, outcome: ch, col: col}
		// Both the timer (0) and the outcome are ready: select picks
		// either.
		out, err := call.Wait(t.Context(), 0)
		if err != nil || out.RequestID != "r" {
			t.Fatalf("wait %d: outcome %+v, err %v: the delivered outcome was dropped", i, out, err)
		}
	}
}
