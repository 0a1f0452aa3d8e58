// SPDX-License-Identifier: Apache-2.0

package peers

import (
	"context"
	"os"
	"testing"

	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"

	"github.com/kretrieve/kretrieve/bench/relay"
)

// TestMain lets relay.StartBrokerProcess re-execute this test binary as
// the relay's broker (see relay.ServeBrokerIfAsked).
func TestMain(m *testing.M) {
	relay.ServeBrokerIfAsked()
	os.Exit(m.Run())
}

// peerVariants are the relay.Variants BenchmarkPeers runs before dsm.
var peerVariants = []string{
	"untraced", "kotel", "kotel-1", "kotel-0", "kretrieve-100",
	"kretrieve-1", "kretrieve-1-pathways", "kretrieve-0", "kretrieve-0-pathways",
}

// BenchmarkPeers relays b.N records producer → A → worker → B → consumer,
// the broker in a process of its own, with each of peerVariants and with
// dsm (Datadog Data Streams Monitoring, see DSM) side by side; see the
// package doc.
func BenchmarkPeers(b *testing.B) {
	for _, name := range peerVariants {
		v, ok := relay.VariantNamed(name)
		if !ok {
			b.Fatalf("no relay variant %q", name)
		}
		b.Run(v.Name, func(b *testing.B) { relay.Bench(b, relay.OutOfProcess, v) })
	}
	b.Run("dsm", func(b *testing.B) {
		StartTracer(b, NewAgentSink(b, false).URL)
		relay.Measure(b, relay.OutOfProcess, DSM(), func(context.Context) error {
			tracer.Flush() // sends the Data Streams payload, as the traced variants flush their spans
			return nil
		})
	})
}
