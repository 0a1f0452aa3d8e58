// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/bench/relay"
	"github.com/kretrieve/kretrieve/broker/brokertest"
)

const (
	// PacedRate is the rate, in records per second, at which
	// BenchmarkRelayPaced produces: well below the saturated throughput of
	// every traced relay variant on a 2-core machine (see the package doc),
	// so that latency is measured without queueing behind a saturated stage.
	PacedRate = 2000
	// pacedWarmup records are relayed before the measurement starts: the
	// first records of a run wait for metadata and connections.
	pacedWarmup = 200
	// pacedMaxLatency is the largest latency the histogram records; larger
	// ones are clamped to it.
	pacedMaxLatency = time.Minute
)

// pacedVariants are the relay.Variants BenchmarkRelayPaced runs.
var pacedVariants = []string{"untraced", "kotel", "kretrieve-100"}

// BenchmarkRelayPaced relays b.N records (after pacedWarmup unmeasured ones)
// producer → A → worker → B → consumer at PacedRate and reports the
// percentiles of each record's end-to-end latency; see the package doc.
func BenchmarkRelayPaced(b *testing.B) {
	for _, name := range pacedVariants {
		v, ok := relay.VariantNamed(name)
		if !ok {
			b.Fatalf("no relay variant %q", name)
		}
		b.Run(v.Name, func(b *testing.B) { benchmarkRelayPaced(b, v, PacedRate) })
	}
}

// monoBase is the origin of the stamps: durations since it are read from
// the monotonic clock.
var monoBase = time.Now()

// stamp writes the record's sequence number and the time it is handed to the
// producer into the first 16 bytes of its value; the worker relays the value
// unchanged.
func stamp(value []byte, seq int, at time.Time) {
	binary.BigEndian.PutUint64(value[0:8], uint64(seq))
	binary.BigEndian.PutUint64(value[8:16], uint64(at.Sub(monoBase)))
}

func unstamp(value []byte) (seq int, at time.Time, err error) {
	if len(value) < 16 {
		return 0, time.Time{}, fmt.Errorf("value of %d bytes has no stamp", len(value))
	}
	return int(binary.BigEndian.Uint64(value[0:8])), monoBase.Add(time.Duration(binary.BigEndian.Uint64(value[8:16]))), nil
}

// pacer returns the value of each record at its time: record i is due at
// start + i/rate, where start is the first call. A late producer does not
// sleep until it has caught up, so the schedule does not drift and a stall
// shows as a burst of records, whose latency counts from when each was
// produced. onMeasureStart is called just before record pacedWarmup, with
// the time that record was due.
func pacer(rate int, onMeasureStart func(due time.Time)) func(ctx context.Context, i int) ([]byte, error) {
	interval := time.Second / time.Duration(rate)
	var start time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	return func(ctx context.Context, i int) ([]byte, error) {
		if i == 0 {
			start = time.Now()
		}
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			}
		}
		if i == pacedWarmup {
			onMeasureStart(start.Add(time.Duration(i) * interval))
		}
		value := make([]byte, relay.ValueSize)
		stamp(value, i, time.Now())
		return value, nil
	}
}

// pacedResult is what one paced run measured, after the warm-up.
type pacedResult struct {
	latency *hdrhistogram.Histogram // µs from produce to the consumer's end of processing
	elapsed time.Duration           // from the first measured produce to the last receipt
	cpu     time.Duration           // process CPU over the same span (until the producer's flush)
}

// runPaced relays r.n records, the first pacedWarmup of them unmeasured, at
// rate records per second. onMeasureStart is called when the measurement
// starts (to reset a benchmark's timer).
func runPaced(ctx context.Context, tb testing.TB, r *relay.Relay, rate int, onMeasureStart func()) (pacedResult, error) {
	res := pacedResult{latency: hdrhistogram.New(1, pacedMaxLatency.Microseconds(), 3)}
	var last time.Time // when the last record was received
	var stampErr error
	r.Observe = func(rec *kgo.Record, received time.Time) {
		seq, sent, err := unstamp(rec.Value)
		if err != nil {
			stampErr = err
			return
		}
		last = received
		if seq >= pacedWarmup {
			_ = res.latency.RecordValue(min(received.Sub(sent).Microseconds(), pacedMaxLatency.Microseconds()))
		}
	}
	var start time.Time
	var cpu0 time.Duration
	err := r.RunWith(ctx, pacer(rate, func(due time.Time) {
		onMeasureStart()
		// The measurement starts when record pacedWarmup was due, not when
		// it went out: a producer behind schedule catches up faster than
		// the pace, and elapsed must still cover the schedule.
		start, cpu0 = due, relay.CPUTime(tb)
	}))
	if err != nil {
		return res, err
	}
	// The consumer's last observe happened before it closed done, which
	// runWith waited for.
	res.elapsed, res.cpu = last.Sub(start), relay.CPUTime(tb)-cpu0
	if stampErr != nil {
		return res, stampErr
	}
	if got, want := res.latency.TotalCount(), int64(r.N-pacedWarmup); got != want {
		return res, fmt.Errorf("%d latencies recorded, want %d", got, want)
	}
	return res, nil
}

func benchmarkRelayPaced(b *testing.B, v relay.Variant, rate int) {
	inst, p := v.Instrument(b)
	r := relay.New(b, brokertest.NewBroker(b, relay.Partitions).Addr(), inst, pacedWarmup+b.N)
	ctx, cancel := context.WithTimeout(b.Context(), relay.Timeout)
	defer cancel()

	b.ResetTimer()
	res, err := runPaced(ctx, b, r, rate, b.ResetTimer)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}

	n := float64(b.N)
	b.ReportMetric(n/res.elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(res.cpu.Microseconds())/n, "cpu-µs/msg")
	b.ReportMetric(float64(res.latency.ValueAtQuantile(50)), "p50-µs")
	b.ReportMetric(float64(res.latency.ValueAtQuantile(99)), "p99-µs")
	b.ReportMetric(float64(res.latency.ValueAtQuantile(99.9)), "p99.9-µs")
	b.ReportMetric(float64(res.latency.Max()), "max-µs")
	if p != nil {
		p.ReportSpans(b, r.N)
	}
}
