// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/bench/relay"
	"github.com/kretrieve/kretrieve/broker/brokertest"
)

func TestStampRoundTrip(t *testing.T) {
	value := make([]byte, relay.ValueSize)
	at := time.Now()
	stamp(value, 12345, at)
	seq, got, err := unstamp(value)
	if err != nil || seq != 12345 || got.Sub(at) != 0 {
		t.Fatalf("unstamp = %d, %v, %v; want 12345, %v", seq, got, err, at)
	}
	if _, _, err := unstamp(value[:15]); err == nil {
		t.Error("unstamp of a 15-byte value succeeded")
	}
}

// TestRelayPacedMeasuresEveryRecord runs a short paced relay and checks that
// each record after the warm-up has one latency and that the rate held.
func TestRelayPacedMeasuresEveryRecord(t *testing.T) {
	const n, rate = 300, 5000
	r := relay.New(t, brokertest.NewBroker(t, relay.Partitions).Addr(), relay.Untraced, pacedWarmup+n)
	measuring := false
	res, err := runPaced(t.Context(), t, r, rate, func() { measuring = true })
	if err != nil {
		t.Fatal(err)
	}
	if !measuring {
		t.Error("the measurement never started")
	}
	if got := res.latency.TotalCount(); got != n {
		t.Errorf("%d latencies, want %d", got, n)
	}
	if p50 := res.latency.ValueAtQuantile(50); p50 <= 0 || p50 > time.Minute.Microseconds() {
		t.Errorf("median latency %d µs", p50)
	}
	// Paced, n records take at least (n-1)/rate.
	if minElapsed := time.Duration(n-1) * time.Second / rate; res.elapsed < minElapsed {
		t.Errorf("%d records relayed in %v, faster than the pace allows (%v)", n, res.elapsed, minElapsed)
	}
}
