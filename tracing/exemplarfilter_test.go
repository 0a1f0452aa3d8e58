// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/tracing"
)

// OTEL_METRICS_EXEMPLAR_FILTER decides the exemplars of kretrieve's own
// histograms (the messaging ones and the pathway latency), as it does the
// SDK's: trace_based keeps those of sampled spans, always_off none,
// always_on every measurement, in an unsampled span (with its trace) or
// outside any trace (without one).
func TestExemplarFilter(t *testing.T) {
	for _, tc := range []struct {
		filter        string
		tp            trace.TracerProvider
		wantExemplars bool
		wantTrace     bool // the exemplars carry the span's trace
	}{
		{filter: "", tp: tracerProvider(t, sdktrace.AlwaysSample()), wantExemplars: true, wantTrace: true},
		{filter: "trace_based", tp: tracerProvider(t, sdktrace.NeverSample())},
		{filter: "always_off", tp: tracerProvider(t, sdktrace.AlwaysSample())},
		{filter: "ALWAYS_ON", tp: tracerProvider(t, sdktrace.NeverSample()), wantExemplars: true, wantTrace: true},
		{filter: "always_on", tp: tracenoop.NewTracerProvider(), wantExemplars: true},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			prefs, err := tracing.ReadMetricsPreferences(envMap(map[string]string{"OTEL_METRICS_EXEMPLAR_FILTER": tc.filter}))
			require.NoError(t, err)
			m := kafkatrace.NewMetrics(kafkatrace.WithExemplarFilter(prefs.ExemplarFilter))
			opts := []kafkatrace.Option{kafkatrace.WithTracerProvider(tc.tp), kafkatrace.WithPropagator(testPropagator()), kafkatrace.WithMetrics(m), kafkatrace.WithParentBasedSampling()}
			gw := kafkatrace.New(append(opts, kafkatrace.WithPathways("gw"))...)
			wk := kafkatrace.New(append(opts, kafkatrace.WithPathways("wk"), kafkatrace.WithConsumerGroup("g"))...)
			out := &kgo.Record{Topic: "req", Value: []byte("q")}
			produce(gw, out)
			in := consumed(out)
			ctx, span, qw := wk.StartProcess(context.Background(), in, -1)
			wk.EndProcess(ctx, in, qw.End, span, nil, "")
			traceID := span.SpanContext().TraceID()

			got := collect(t, m)
			exemplars := map[string][]metricdata.Exemplar[float64]{}
			for _, name := range []string{"messaging.client.operation.duration", "messaging.process.duration", otelnames.MetricQueueWait} {
				h, ok := got[name].(metricdata.Histogram[float64])
				require.True(t, ok, name)
				for _, dp := range h.DataPoints {
					exemplars[name] = append(exemplars[name], dp.Exemplars...)
				}
			}
			pw, ok := got[otelnames.MetricPathwayLatency].(metricdata.ExponentialHistogram[float64])
			require.True(t, ok)
			require.Len(t, pw.DataPoints, 4)
			for _, dp := range pw.DataPoints {
				exemplars[otelnames.MetricPathwayLatency] = append(exemplars[otelnames.MetricPathwayLatency], dp.Exemplars...)
			}
			for name, ex := range exemplars {
				if !tc.wantExemplars {
					assert.Empty(t, ex, name)
					continue
				}
				require.NotEmpty(t, ex, name)
				for _, e := range ex {
					if tc.wantTrace {
						assert.Equal(t, traceID[:], e.TraceID, name)
						assert.Len(t, e.SpanID, 8, name)
					} else {
						assert.Nil(t, e.TraceID, "%s: no trace, no trace id", name)
						assert.Nil(t, e.SpanID, name)
					}
				}
			}
			if tc.wantExemplars {
				assert.Len(t, exemplars[otelnames.MetricPathwayLatency], 4, "one per pathway point")
			}
		})
	}
}

func TestExemplarFilterUnknown(t *testing.T) {
	prefs, err := tracing.ReadMetricsPreferences(envMap(map[string]string{"OTEL_METRICS_EXEMPLAR_FILTER": "sometimes"}))
	require.ErrorContains(t, err, `OTEL_METRICS_EXEMPLAR_FILTER="sometimes": want trace_based, always_on or always_off`)
	assert.Equal(t, kafkatrace.ExemplarsTraceBased, prefs.ExemplarFilter, "the default")
}

// tracerProvider returns an SDK tracer provider sampling with sampler.
func tracerProvider(t *testing.T, sampler sdktrace.Sampler) trace.TracerProvider {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sampler)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}
