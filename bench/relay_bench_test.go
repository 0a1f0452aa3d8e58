// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"os"
	"testing"

	"github.com/kretrieve/kretrieve/bench/relay"
)

// TestMain lets StartBrokerProcess re-execute this test binary as the
// broker of BenchmarkRelayClient (see relay.ServeBrokerIfAsked).
func TestMain(m *testing.M) {
	relay.ServeBrokerIfAsked()
	os.Exit(m.Run())
}

// BenchmarkRelay relays b.N records producer → A → worker → B → consumer for
// each variant of relay.Variants, the broker in the same process; see the
// package doc for the variants, the metrics and the intended -benchtime.
func BenchmarkRelay(b *testing.B) {
	for _, v := range relay.Variants {
		b.Run(v.Name, func(b *testing.B) { relay.Bench(b, relay.InProcess, v) })
	}
}

// BenchmarkRelayClient is BenchmarkRelay with the broker in a process of
// its own: it reports the CPU of the benchmark's process (the clients and
// their instrumentation) apart from the broker's.
func BenchmarkRelayClient(b *testing.B) {
	for _, v := range relay.Variants {
		b.Run(v.Name, func(b *testing.B) { relay.Bench(b, relay.OutOfProcess, v) })
	}
}
