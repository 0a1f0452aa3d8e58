// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// Every aggregation the SDK produces has its OTLP counterpart.
func TestMetricProtoAggregations(t *testing.T) {
	now := time.Unix(100, 5)
	attrs := attribute.NewSet(attribute.String("k", "v"))
	for _, tc := range []struct {
		name  string
		data  metricdata.Aggregation
		check func(t *testing.T, m *metricspb.Metric)
	}{
		{name: "float gauge", data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Attributes: attrs, Time: now, Value: 2.5}}},
			check: func(t *testing.T, m *metricspb.Metric) {
				dp := m.GetGauge().GetDataPoints()[0]
				assert.InDelta(t, 2.5, dp.GetAsDouble(), 0)
				assert.Zero(t, dp.GetStartTimeUnixNano(), "a zero time is 0")
				assert.Equal(t, uint64(now.UnixNano()), dp.GetTimeUnixNano())
				assert.Equal(t, "v", dp.GetAttributes()[0].GetValue().GetStringValue())
			}},
		{name: "int gauge", data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 4}}},
			check: func(t *testing.T, m *metricspb.Metric) {
				assert.Equal(t, int64(4), m.GetGauge().GetDataPoints()[0].GetAsInt())
			}},
		{name: "cumulative float up-down sum", data: metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality,
			DataPoints: []metricdata.DataPoint[float64]{{Value: -1.5, Exemplars: []metricdata.Exemplar[float64]{{Value: 0.25, SpanID: []byte{1, 2, 3, 4, 5, 6, 7, 8}}}}}},
			check: func(t *testing.T, m *metricspb.Metric) {
				s := m.GetSum()
				assert.False(t, s.GetIsMonotonic())
				assert.Equal(t, metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, s.GetAggregationTemporality())
				assert.InDelta(t, -1.5, s.GetDataPoints()[0].GetAsDouble(), 0)
				ex := s.GetDataPoints()[0].GetExemplars()[0]
				assert.InDelta(t, 0.25, ex.GetAsDouble(), 0)
				assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, ex.GetSpanId())
			}},
		{name: "int histogram without extrema", data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality,
			DataPoints: []metricdata.HistogramDataPoint[int64]{{Count: 2, Sum: 7, Bounds: []float64{5}, BucketCounts: []uint64{1, 1}}}},
			check: func(t *testing.T, m *metricspb.Metric) {
				dp := m.GetHistogram().GetDataPoints()[0]
				assert.InDelta(t, 7, dp.GetSum(), 0)
				assert.Nil(t, dp.Min)
				assert.Nil(t, dp.Max)
				assert.Equal(t, []uint64{1, 1}, dp.GetBucketCounts())
			}},
		{name: "exponential histogram", data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.DeltaTemporality,
			DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{
				Count: 3, Sum: 6, Scale: 2, ZeroCount: 1, ZeroThreshold: 0.001,
				Min: metricdata.NewExtrema(0.0), Max: metricdata.NewExtrema(4.0),
				PositiveBucket: metricdata.ExponentialBucket{Offset: 3, Counts: []uint64{1, 1}},
				NegativeBucket: metricdata.ExponentialBucket{Offset: -1, Counts: []uint64{}},
			}}},
			check: func(t *testing.T, m *metricspb.Metric) {
				e := m.GetExponentialHistogram()
				assert.Equal(t, metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, e.GetAggregationTemporality())
				dp := e.GetDataPoints()[0]
				assert.Equal(t, int32(2), dp.GetScale())
				assert.Equal(t, uint64(1), dp.GetZeroCount())
				assert.Equal(t, int32(3), dp.GetPositive().GetOffset())
				assert.Equal(t, []uint64{1, 1}, dp.GetPositive().GetBucketCounts())
				assert.Equal(t, int32(-1), dp.GetNegative().GetOffset())
				assert.InDelta(t, 4, dp.GetMax(), 0)
				assert.InDelta(t, 0.001, dp.GetZeroThreshold(), 0)
			}},
		{name: "summary", data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{Count: 2, Sum: 3, QuantileValues: []metricdata.QuantileValue{{Quantile: 0.5, Value: 1}}}}},
			check: func(t *testing.T, m *metricspb.Metric) {
				dp := m.GetSummary().GetDataPoints()[0]
				assert.Equal(t, uint64(2), dp.GetCount())
				assert.InDelta(t, 0.5, dp.GetQuantileValues()[0].GetQuantile(), 0)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := metricProto(metricdata.Metrics{Name: "m", Unit: "s", Description: "d", Data: tc.data})
			require.NotNil(t, m)
			assert.Equal(t, "m", m.GetName())
			assert.Equal(t, "s", m.GetUnit())
			tc.check(t, m)
			_, err := marshalOTLPJSON(metricsRequest(&metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{{Name: "m", Data: tc.data}}}}}))
			require.NoError(t, err)
		})
	}
	assert.Nil(t, metricProto(metricdata.Metrics{Name: "unknown"}), "an aggregation OTLP does not know is left out")
}

// Attribute and body values of every kind are converted as the trace
// exporters convert them, and invalid UTF-8 does not fail the export.
func TestAnyValueProtoKinds(t *testing.T) {
	v := attribute.MapValue(
		attribute.ByteSlice("bytes", []byte{0xff, 0}),
		attribute.Slice("slice", attribute.IntValue(1), attribute.StringValue("two")),
		attribute.KeyValue{Key: "empty", Value: attribute.Value{}},
		attribute.String("bad", "a\xffb"),
	)
	p := anyValueProto(v)
	kvs := p.GetKvlistValue().GetValues()
	require.Len(t, kvs, 4)
	got := map[string]int{}
	for i, kv := range kvs {
		got[kv.GetKey()] = i
	}
	assert.Equal(t, []byte{0xff, 0}, kvs[got["bytes"]].GetValue().GetBytesValue())
	sl := kvs[got["slice"]].GetValue().GetArrayValue().GetValues()
	assert.Equal(t, int64(1), sl[0].GetIntValue())
	assert.Equal(t, "two", sl[1].GetStringValue())
	assert.Nil(t, kvs[got["empty"]].GetValue().GetValue(), "EMPTY is an AnyValue without value")
	assert.Equal(t, "a\uFFFDb", kvs[got["bad"]].GetValue().GetStringValue())

	var r sdklog.Record
	r.SetBody(v)
	r.SetTimestamp(time.Unix(1, 0))
	b, err := marshalOTLPJSON(logsRequest([]sdklog.Record{r}))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"kvlistValue"`)
	assert.Contains(t, string(b), `"timeUnixNano":"1000000000"`)
	assert.NotContains(t, string(b), `"traceId"`, "no trace, no id")
}

// captureLogs keeps the records exported to it.
type captureLogs struct{ records []sdklog.Record }

func (c *captureLogs) Export(_ context.Context, rs []sdklog.Record) error {
	for _, r := range rs {
		c.records = append(c.records, r.Clone())
	}
	return nil
}
func (*captureLogs) ForceFlush(context.Context) error { return nil }
func (*captureLogs) Shutdown(context.Context) error   { return nil }

// Records of different scopes go to different ScopeLogs, in the order the
// scopes first appear.
func TestLogsRequestGroupsByScope(t *testing.T) {
	c := &captureLogs{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(c)))
	for _, name := range []string{"a", "b", "a"} {
		var r otellog.Record
		r.SetBody(attribute.StringValue(name))
		lp.Logger(name).Emit(t.Context(), r)
	}
	require.Len(t, c.records, 3)
	req := logsRequest(c.records)
	require.Len(t, req.GetResourceLogs(), 1)
	sls := req.GetResourceLogs()[0].GetScopeLogs()
	require.Len(t, sls, 2)
	assert.Equal(t, "a", sls[0].GetScope().GetName())
	assert.Len(t, sls[0].GetLogRecords(), 2)
	assert.Equal(t, "b", sls[1].GetScope().GetName())
	assert.Len(t, sls[1].GetLogRecords(), 1)
	assert.Equal(t, "a", sls[0].GetLogRecords()[1].GetBody().GetStringValue())
}

// The metric and log exporters read their own per-signal variables, which
// win over the general ones, and append /v1/metrics or /v1/logs to the
// general endpoint only.
func TestSignalConfig(t *testing.T) {
	env := map[string]string{
		envEndpoint:                          "http://c:4318/base",
		envLogsEndpoint:                      "http://l:4318/custom",
		"OTEL_EXPORTER_OTLP_HEADERS":         "a=1",
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "a=2",
		"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT":    "250",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
	}
	o := otlpEnv{getenv: func(k string) string { return env[k] }}
	m, err := o.signalConfig(metricsEnv, 0)
	require.NoError(t, err)
	assert.Equal(t, "http://c:4318/base/v1/metrics", m.EndpointURL)
	assert.Equal(t, map[string]string{"a": "2"}, m.Headers)
	assert.Equal(t, otlpwire.DefaultTimeout, m.Timeout)
	assert.Equal(t, otlpwire.GzipCompression, m.Compression)
	l, err := o.signalConfig(logsEnv, 0)
	require.NoError(t, err)
	assert.Equal(t, "http://l:4318/custom", l.EndpointURL)
	assert.Equal(t, map[string]string{"a": "1"}, l.Headers)
	assert.Equal(t, 250*time.Millisecond, l.Timeout)

	d, err := otlpEnv{getenv: func(string) string { return "" }}.signalConfig(logsEnv, 0)
	require.NoError(t, err)
	assert.Equal(t, "https://localhost:4318/v1/logs", d.EndpointURL)
	_, err = otlpEnv{getenv: func(k string) string { return map[string]string{"OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY": "k"}[k] }}.signalConfig(metricsEnv, 0)
	assert.ErrorContains(t, err, "OTEL_EXPORTER_OTLP_(METRICS_)CLIENT_CERTIFICATE")
}
