// SPDX-License-Identifier: Apache-2.0

package otlptest_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
)

func TestServerDecodesExponentialHistograms(t *testing.T) {
	s := otlptest.NewServer(t)
	sum := 1.25
	dp := &metricpb.ExponentialHistogramDataPoint{
		Attributes:        []*commonpb.KeyValue{strAttr("edge", "a → b")},
		StartTimeUnixNano: 1_000_000_000,
		TimeUnixNano:      2_000_000_000,
		Count:             6,
		Sum:               &sum,
		Scale:             4,
		ZeroCount:         1,
		Positive:          &metricpb.ExponentialHistogramDataPoint_Buckets{Offset: -3, BucketCounts: []uint64{2, 0, 2}},
		Negative:          &metricpb.ExponentialHistogramDataPoint_Buckets{Offset: 5, BucketCounts: []uint64{1}},
		Exemplars: []*metricpb.Exemplar{
			{TimeUnixNano: 1_500_000_000, Value: &metricpb.Exemplar_AsDouble{AsDouble: 0.5},
				TraceId: bytes.Repeat([]byte{0xab}, 16), SpanId: bytes.Repeat([]byte{0xcd}, 8)},
			{TimeUnixNano: 1_600_000_000, Value: &metricpb.Exemplar_AsInt{AsInt: 3}},
		},
	}
	req := &colmetricpb.ExportMetricsServiceRequest{ResourceMetrics: []*metricpb.ResourceMetrics{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("service.name", "svc")}},
		ScopeMetrics: []*metricpb.ScopeMetrics{{
			Scope: &commonpb.InstrumentationScope{Name: "scope"},
			Metrics: []*metricpb.Metric{
				{Name: "latency", Unit: "s", Data: &metricpb.Metric_ExponentialHistogram{ExponentialHistogram: &metricpb.ExponentialHistogram{
					AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
					DataPoints:             []*metricpb.ExponentialHistogramDataPoint{dp},
				}}},
				// Same name, another kind: not an exponential histogram.
				{Name: "latency", Data: &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{}}},
				{Name: "other", Data: &metricpb.Metric_ExponentialHistogram{ExponentialHistogram: &metricpb.ExponentialHistogram{
					DataPoints: []*metricpb.ExponentialHistogramDataPoint{{Count: 9}},
				}}},
			},
		}},
	}}}
	body, err := proto.Marshal(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, post(t, s.Endpoint()+"/v1/metrics", "application/x-protobuf", "", body))

	got := s.ExponentialHistogramPoints("latency")
	require.Len(t, got, 1)
	p := got[0]
	assert.Equal(t, "latency", p.Metric)
	assert.Equal(t, "s", p.Unit)
	assert.Equal(t, "DELTA", p.Temporality)
	assert.Equal(t, "svc", p.ServiceName)
	assert.Equal(t, "scope", p.ScopeName)
	assert.Equal(t, map[string]any{"edge": "a → b"}, p.Attributes)
	assert.Equal(t, time.Unix(1, 0), p.Start)
	assert.Equal(t, time.Unix(2, 0), p.Time)
	assert.Equal(t, uint64(6), p.Count)
	assert.True(t, p.HasSum)
	assert.InDelta(t, 1.25, p.Sum, 0)
	assert.Equal(t, int32(4), p.Scale)
	assert.Equal(t, uint64(1), p.ZeroCount)
	assert.Equal(t, otlptest.Buckets{Offset: -3, Counts: []uint64{2, 0, 2}}, p.Positive)
	assert.Equal(t, otlptest.Buckets{Offset: 5, Counts: []uint64{1}}, p.Negative)
	assert.Equal(t, []otlptest.Exemplar{
		{Value: 0.5, Time: time.Unix(1, 500_000_000), TraceID: "abababababababababababababababab", SpanID: "cdcdcdcdcdcdcdcd"},
		{Value: 3, Time: time.Unix(1, 600_000_000)},
	}, p.Exemplars)

	other := s.ExponentialHistogramPoints("other")
	require.Len(t, other, 1)
	assert.False(t, other[0].HasSum, "a point without a sum")
	assert.Equal(t, "UNSPECIFIED", other[0].Temporality)
	assert.Empty(t, s.ExponentialHistogramPoints("missing"))
}

// TestServerDecodesSDKExponentialHistogram exports a base-2 exponential
// histogram with the SDK's OTLP/HTTP exporter and finds the recorded
// values, the exemplar of a sampled span among them, in the decoded point.
func TestServerDecodesSDKExponentialHistogram(t *testing.T) {
	s := otlptest.NewServer(t)
	ctx := context.Background()
	exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(s.Endpoint()+"/v1/metrics"),
		otlpmetrichttp.WithTemporalitySelector(func(sdkmetric.InstrumentKind) metricdata.Temporality { return metricdata.DeltaTemporality }))
	require.NoError(t, err)
	view := sdkmetric.NewView(sdkmetric.Instrument{Name: "latency"}, sdkmetric.Stream{
		Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 4},
	})
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithView(view),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "otlptest-expo"))))
	h, err := mp.Meter("expo").Float64Histogram("latency", metric.WithUnit("s"))
	require.NoError(t, err)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled,
	})
	h.Record(trace.ContextWithSpanContext(ctx, sc), 0.25, metric.WithAttributes(attribute.String("edge", "x")))
	h.Record(ctx, 0.25, metric.WithAttributes(attribute.String("edge", "x")))
	h.Record(ctx, 0, metric.WithAttributes(attribute.String("edge", "x")))
	require.NoError(t, mp.Shutdown(ctx))

	got := s.ExponentialHistogramPoints("latency")
	require.Len(t, got, 1)
	p := got[0]
	assert.Equal(t, "DELTA", p.Temporality)
	assert.Equal(t, "otlptest-expo", p.ServiceName)
	assert.Equal(t, "x", p.Attributes["edge"])
	assert.Equal(t, uint64(3), p.Count)
	assert.Equal(t, uint64(1), p.ZeroCount)
	assert.InDelta(t, 0.5, p.Sum, 1e-12)
	// 0.25 = 2^-2 lies in the bucket (2^((i)/16), 2^((i+1)/16)] with
	// i = -2*16 - 1 at scale 4.
	require.Equal(t, int32(4), p.Scale)
	assert.Equal(t, otlptest.Buckets{Offset: -33, Counts: []uint64{2}}, p.Positive)
	require.NotEmpty(t, p.Exemplars)
	found := false
	for _, e := range p.Exemplars {
		if e.TraceID == sc.TraceID().String() && e.SpanID == sc.SpanID().String() {
			found = true
			assert.InDelta(t, 0.25, e.Value, 0)
		}
	}
	assert.True(t, found, "exemplar of the sampled span missing: %+v", p.Exemplars)
}
