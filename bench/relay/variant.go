// SPDX-License-Identifier: Apache-2.0

package relay

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/tracing"
)

// Variant is one instrumentation of the relay, one sub-benchmark of the
// relay benchmarks (see the package doc of bench for each).
type Variant struct {
	Name string
	// Kotel selects kotel's instrumentation, otherwise kafkatrace's; both
	// are unused when Sampler is nil (untraced).
	Kotel   bool
	Sampler sdktrace.Sampler
	// OTLPWire selects kretrieve's exporter (internal/otlpwire) instead of
	// the SDK's otlptracehttp.
	OTLPWire     bool
	BatchOptions []sdktrace.BatchSpanProcessorOption
	// Pathways turns kafkatrace's pathway checkpoints on (WithPathways).
	Pathways bool
	// RootRatio, when set, builds the sampler as tracing.Setup does for
	// OTEL_TRACES_SAMPLER=parentbased_traceidratio with this
	// OTEL_TRACES_SAMPLER_ARG: a tracing.RootSampler, with which kafkatrace
	// decides root send spans (WithRootSampler). Sampler is then the same
	// sampler, for the record.
	RootRatio string
}

// bigQueue keeps the batch span processor from dropping spans, so that the
// variants are compared on the work of exporting every span: at saturation
// any queue that drops spans makes a variant look cheaper than it is.
var bigQueue = []sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxQueueSize(1 << 20)}

// Samplers of the variants: every record, 1 % and none, each parent-based
// as kretrieve configures it (parentbased_traceidratio).
var (
	sample100 = sdktrace.ParentBased(sdktrace.AlwaysSample())
	sample1   = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))
	sample0   = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0))
)

// Variants are the relay's variants, in the order the benchmarks run them.
var Variants = []Variant{
	{Name: "untraced"},
	{Name: "kotel", Kotel: true, Sampler: sdktrace.AlwaysSample(), BatchOptions: bigQueue},
	{Name: "kotel-otlpwire", Kotel: true, Sampler: sdktrace.AlwaysSample(), OTLPWire: true, BatchOptions: bigQueue},
	{Name: "kotel-1", Kotel: true, Sampler: sample1, BatchOptions: bigQueue},
	{Name: "kotel-0", Kotel: true, Sampler: sample0, BatchOptions: bigQueue},
	{Name: "kretrieve-100", Sampler: sample100, OTLPWire: true, BatchOptions: bigQueue},
	{Name: "kretrieve-1", Sampler: sample1, OTLPWire: true, BatchOptions: bigQueue, RootRatio: "0.01"},
	{Name: "kretrieve-1-pathways", Sampler: sample1, OTLPWire: true, BatchOptions: bigQueue, Pathways: true, RootRatio: "0.01"},
	{Name: "kretrieve-0", Sampler: sample0, OTLPWire: true, BatchOptions: bigQueue, RootRatio: "0"},
	{Name: "kretrieve-0-pathways", Sampler: sample0, OTLPWire: true, BatchOptions: bigQueue, Pathways: true, RootRatio: "0"},
	{Name: "kretrieve-100-setup-batch", Sampler: sample100, OTLPWire: true, BatchOptions: tracing.BatchSpanProcessorDefaults()},
	{Name: "kretrieve-100-sdk-batch", Sampler: sample100, OTLPWire: true},
}

// VariantNamed returns the variant of Variants called name.
func VariantNamed(name string) (Variant, bool) {
	for _, v := range Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// Instrument returns v's instrumentation and, for a traced variant, the
// providers it records into (nil for untraced).
func (v Variant) Instrument(tb testing.TB) (Instrumentation, *Providers) {
	if v.Sampler == nil {
		return Untraced, nil
	}
	p := NewProviders(tb, v)
	if v.Kotel {
		return Kotel(p.TP, p.MP), p
	}
	return Kretrieve(p.TP, p.Metrics, v.Pathways, p.KafkatraceOptions()...), p
}

// Mode says where the relay's broker runs.
type Mode int

const (
	// InProcess runs the broker in the benchmark's process
	// (brokertest.NewBroker): cpu-µs/msg is the whole process's.
	InProcess Mode = iota
	// OutOfProcess runs the broker in a child process
	// (StartBrokerProcess): client-cpu-µs/msg is the benchmark process's
	// alone, broker-cpu-µs/msg the broker's.
	OutOfProcess
)

// Bench relays b.N records with v, its broker in mode m, and reports the
// metrics of Measure and, for a traced variant, spans/msg and
// dropped-spans (spans ended but never received by the exporter, counted
// after the provider's shutdown).
func Bench(b *testing.B, m Mode, v Variant) {
	inst, p := v.Instrument(b)
	var flush func(context.Context) error
	if p != nil {
		flush = p.TP.ForceFlush
	}
	Measure(b, m, inst, flush)
	if p != nil {
		p.ReportSpans(b, b.N)
	}
}

// ReportSpans shuts the providers down (flushing every span) and reports
// spans/msg over n messages and dropped-spans (spans ended but never
// received by the exporter).
func (p *Providers) ReportSpans(b *testing.B, n int) {
	if err := p.Shutdown(); err != nil {
		b.Fatalf("shutdown tracer provider: %v", err)
	}
	ended, exported := p.Counts.Ended.Load(), p.Counts.Exported.Load()
	b.ReportMetric(float64(ended)/float64(n), "spans/msg")
	b.ReportMetric(float64(ended-exported), "dropped-spans")
}

// Measure starts a broker in mode m and a relay of b.N records
// instrumented by inst, outside the timer, then times the relay from the
// first produce until the consumer has counted b.N records and flush (when
// not nil) has returned, bounded by Timeout. It reports msgs/s and, in
// process, cpu-µs/msg (user+system CPU of the whole process per record,
// getrusage RUSAGE_SELF); out of process, client-cpu-µs/msg (the same for
// the benchmark's process, which holds the three clients and whatever
// inst runs, without the broker) and broker-cpu-µs/msg (the broker
// process's).
func Measure(b *testing.B, m Mode, inst Instrumentation, flush func(context.Context) error) {
	var addr string
	var brokerCPU func() (time.Duration, error)
	if m == OutOfProcess {
		bp := StartBrokerProcess(b)
		addr, brokerCPU = bp.Addr, bp.CPU
	} else {
		addr = brokertest.NewBroker(b, Partitions).Addr()
	}
	r := New(b, addr, inst, b.N)
	ctx, cancel := context.WithTimeout(b.Context(), Timeout)
	defer cancel()

	b.ResetTimer()
	cpu0, bcpu0 := CPUTime(b), readCPU(b, brokerCPU)
	start := time.Now()
	if err := r.Run(ctx); err != nil {
		b.Fatal(err)
	}
	if flush != nil {
		if err := flush(ctx); err != nil {
			b.Fatalf("flush: %v", err)
		}
	}
	elapsed := time.Since(start)
	cpu, bcpu := CPUTime(b)-cpu0, readCPU(b, brokerCPU)-bcpu0
	b.StopTimer()

	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "msgs/s")
	if m == OutOfProcess {
		b.ReportMetric(float64(cpu.Microseconds())/n, "client-cpu-µs/msg")
		b.ReportMetric(float64(bcpu.Microseconds())/n, "broker-cpu-µs/msg")
	} else {
		b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/msg")
	}
}

// CPUTime is ProcessCPU, failing tb on error.
func CPUTime(tb testing.TB) time.Duration {
	cpu, err := ProcessCPU()
	if err != nil {
		tb.Fatal(err)
	}
	return cpu
}

// readCPU calls read, when not nil, failing tb on error.
func readCPU(tb testing.TB, read func() (time.Duration, error)) time.Duration {
	if read == nil {
		return 0
	}
	cpu, err := read()
	if err != nil {
		tb.Fatal(err)
	}
	return cpu
}
