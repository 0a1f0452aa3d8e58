// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/tracing"
)

// relayVariant is one sub-benchmark of BenchmarkRelay.
type relayVariant struct {
	name string
	// kotel selects kotel's instrumentation, otherwise kafkatrace's; both
	// are unused when sampler is nil (untraced).
	kotel   bool
	sampler sdktrace.Sampler
	// otlpwire selects kretrieve's exporter (internal/otlpwire) instead of
	// the SDK's otlptracehttp.
	otlpwire bool
	bspOpts  []sdktrace.BatchSpanProcessorOption
	// pathways turns kafkatrace's pathway checkpoints on (WithPathways).
	pathways bool
	// rootRatio, when set, builds the sampler as tracing.Setup does for
	// OTEL_TRACES_SAMPLER=parentbased_traceidratio with this
	// OTEL_TRACES_SAMPLER_ARG: a tracing.RootSampler, which kafkatrace
	// decides root send spans with (WithRootSampler). sampler is then the
	// same sampler.
	rootRatio string
}

// bigQueue keeps the batch span processor from dropping spans, so that the
// variants are compared on the work of exporting every span: at saturation
// any queue that drops spans makes a variant look cheaper than it is.
var bigQueue = []sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxQueueSize(1 << 20)}

// kretrieveBatch are the batch settings tracing.Setup uses by default.
var kretrieveBatch = tracing.BatchSpanProcessorDefaults()

var relayVariants = []relayVariant{
	{name: "untraced"},
	{name: "kotel", kotel: true, sampler: sdktrace.AlwaysSample(), bspOpts: bigQueue},
	{name: "kotel-otlpwire", kotel: true, sampler: sdktrace.AlwaysSample(), otlpwire: true, bspOpts: bigQueue},
	{name: "kretrieve-100", sampler: sdktrace.ParentBased(sdktrace.AlwaysSample()), otlpwire: true, bspOpts: bigQueue},
	{name: "kretrieve-1", sampler: sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01)), otlpwire: true, bspOpts: bigQueue, rootRatio: "0.01"},
	{name: "kretrieve-1-pathways", sampler: sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01)), otlpwire: true, bspOpts: bigQueue, pathways: true, rootRatio: "0.01"},
	{name: "kretrieve-0", sampler: sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0)), otlpwire: true, bspOpts: bigQueue, rootRatio: "0"},
	{name: "kretrieve-0-pathways", sampler: sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0)), otlpwire: true, bspOpts: bigQueue, pathways: true, rootRatio: "0"},
	{name: "kretrieve-100-setup-batch", sampler: sdktrace.ParentBased(sdktrace.AlwaysSample()), otlpwire: true, bspOpts: kretrieveBatch},
	{name: "kretrieve-100-sdk-batch", sampler: sdktrace.ParentBased(sdktrace.AlwaysSample()), otlpwire: true},
}

// BenchmarkRelay relays b.N records producer → A → worker → B → consumer for
// each variant; see the package doc for the variants, the metrics and the
// intended -benchtime.
func BenchmarkRelay(b *testing.B) {
	for _, v := range relayVariants {
		b.Run(v.name, func(b *testing.B) { benchmarkRelay(b, v) })
	}
}

func benchmarkRelay(b *testing.B, v relayVariant) {
	inst := untraced
	var p *providers
	if v.sampler != nil {
		p = newProviders(b, v)
		if v.kotel {
			inst = kotelInstrumentation(p.tp, p.mp)
		} else {
			inst = kretrieveInstrumentation(p.tp, p.metrics, v.pathways, p.kafkatraceOptions()...)
		}
	}
	r := newRelay(b, inst, b.N)
	ctx, cancel := context.WithTimeout(b.Context(), relayTimeout)
	defer cancel()

	b.ResetTimer()
	cpu0 := cpuTime(b)
	start := time.Now()
	if err := r.run(ctx); err != nil {
		b.Fatal(err)
	}
	if p != nil {
		if err := p.tp.ForceFlush(ctx); err != nil {
			b.Fatalf("flush spans: %v", err)
		}
	}
	elapsed := time.Since(start)
	cpu := cpuTime(b) - cpu0
	b.StopTimer()

	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/msg")
	if p != nil {
		if err := p.shutdown(); err != nil {
			b.Fatalf("shutdown tracer provider: %v", err)
		}
		ended, exported := p.counts.ended.Load(), p.counts.exported.Load()
		b.ReportMetric(float64(ended)/n, "spans/msg")
		b.ReportMetric(float64(ended-exported), "dropped-spans")
	}
}

// cpuTime returns the user+system CPU time of the whole process.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
