// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/kretrieve/kretrieve/tracing"
)

// jsonCollector records the OTLP/JSON requests it receives, by path.
type jsonCollector struct {
	mu     sync.Mutex
	bodies map[string][][]byte
	ctypes map[string][]string
	tokens map[string][]string // X-Token headers
}

func newJSONCollector(t *testing.T) (*jsonCollector, string) {
	c := &jsonCollector{bodies: map[string][][]byte{}, ctypes: map[string][]string{}, tokens: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.bodies[r.URL.Path] = append(c.bodies[r.URL.Path], body)
		c.ctypes[r.URL.Path] = append(c.ctypes[r.URL.Path], r.Header.Get("Content-Type"))
		c.tokens[r.URL.Path] = append(c.tokens[r.URL.Path], r.Header.Get("X-Token"))
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// requests returns the bodies posted to path, requiring that each was
// sent as application/json.
func (c *jsonCollector) requests(t *testing.T, path string) [][]byte {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ct := range c.ctypes[path] {
		assert.Equal(t, "application/json", ct, path)
	}
	return c.bodies[path]
}

var hexID = regexp.MustCompile(`"(traceId|spanId)":"([0-9a-f]*)"`)

// unmarshalOTLPJSON decodes an OTLP/JSON body into m, turning the hex
// trace and span ids back into protojson's base64 first, as the OTLP/JSON
// specification says a receiver must.
func unmarshalOTLPJSON(t *testing.T, body []byte, m proto.Message) {
	t.Helper()
	b64 := hexID.ReplaceAllFunc(body, func(s []byte) []byte {
		sub := hexID.FindSubmatch(s)
		id, err := hex.DecodeString(string(sub[2]))
		require.NoError(t, err)
		return []byte(`"` + string(sub[1]) + `":"` + base64.StdEncoding.EncodeToString(id) + `"`)
	})
	require.NoError(t, protojson.Unmarshal(b64, m), "%s", body)
}

func anyString(v *commonpb.AnyValue) string { return v.GetStringValue() }

func attrMap(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

// OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends metrics and logs as
// OTLP/JSON too: application/json, lowerCamelCase names, enums as numbers,
// ids as hex, to the endpoint's /v1/metrics and /v1/logs or the
// per-signal endpoints as they are, with the headers, and the temporality
// preference honoured.
func TestHTTPJSONMetricsAndLogs(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		env                   func(url string) map[string]string
		metricsPath, logsPath string
	}{
		{
			name: "base endpoint",
			env: func(url string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": url, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_HEADERS": "X-Token=s%20cret"}
			},
			metricsPath: "/v1/metrics", logsPath: "/v1/logs",
		},
		{
			name: "per-signal endpoints and protocols",
			env: func(url string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":    url + "/t",
					"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT":   url + "/m",
					"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT":      url + "/l",
					"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL":   "http/json",
					"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL":      "http/json",
					"OTEL_EXPORTER_OTLP_METRICS_HEADERS":    "X-Token=s%20cret",
					"OTEL_EXPORTER_OTLP_LOGS_HEADERS":       "X-Token=s%20cret",
					"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT":    "5000",
					"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":    "http/protobuf",
					"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION":   "none",
					"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none",
				}
			},
			metricsPath: "/m", logsPath: "/l",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, url := newJSONCollector(t)
			for k, v := range tc.env(url) {
				t.Setenv(k, v)
			}
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta")
			p, log, _ := setupWithLogger(t)

			ctx, span := p.TracerProvider.Tracer("test").Start(t.Context(), "job")
			meter := p.MeterProvider.Meter("test.scope", metric.WithInstrumentationVersion("v1.2.3"))
			counter, err := meter.Int64Counter("job.items")
			require.NoError(t, err)
			counter.Add(ctx, 3, metric.WithAttributes(
				attribute.String("s", "x"), attribute.Bool("b", true), attribute.Int64("i", 7), attribute.Float64("f", 1.5),
				attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2}),
				attribute.BoolSlice("bs", []bool{true}), attribute.Float64Slice("fs", []float64{0.5})))
			hist, err := meter.Float64Histogram("job.seconds", metric.WithExplicitBucketBoundaries(1, 10))
			require.NoError(t, err)
			for _, v := range []float64{0.5, 5, 50, 60} {
				hist.Record(ctx, v)
			}
			log.InfoContext(ctx, "job done", "items", 3)
			span.End()
			require.NoError(t, p.Shutdown(context.WithoutCancel(t.Context())))
			assert.Zero(t, p.Dropped().MetricExports)
			assert.Zero(t, p.Dropped().LogRecords)
			traceID := span.SpanContext().TraceID().String()

			metricBodies := c.requests(t, tc.metricsPath)
			require.NotEmpty(t, metricBodies)
			var req colmetricpb.ExportMetricsServiceRequest
			unmarshalOTLPJSON(t, metricBodies[0], &req)
			assert.Contains(t, string(metricBodies[0]), `"aggregationTemporality":1`, "enums are numbers")
			assert.Contains(t, string(metricBodies[0]), `"traceId":"`+traceID+`"`, "exemplar trace id in hex")
			require.Len(t, req.GetResourceMetrics(), 1)
			rm := req.GetResourceMetrics()[0]
			assert.NotEmpty(t, anyString(attrMap(rm.GetResource().GetAttributes())["service.name"]))
			metrics := map[string]*metricspb.Metric{}
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					if sm.GetScope().GetName() == "test.scope" {
						assert.Equal(t, "v1.2.3", sm.GetScope().GetVersion())
						metrics[m.GetName()] = m
					}
				}
			}
			sum := metrics["job.items"].GetSum()
			require.NotNil(t, sum, "job.items in %v", metrics)
			assert.True(t, sum.GetIsMonotonic())
			assert.Equal(t, metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, sum.GetAggregationTemporality())
			require.Len(t, sum.GetDataPoints(), 1)
			dp := sum.GetDataPoints()[0]
			assert.Equal(t, int64(3), dp.GetAsInt())
			assert.NotZero(t, dp.GetStartTimeUnixNano())
			assert.Greater(t, dp.GetTimeUnixNano(), dp.GetStartTimeUnixNano())
			attrs := attrMap(dp.GetAttributes())
			assert.Equal(t, "x", attrs["s"].GetStringValue())
			assert.True(t, attrs["b"].GetBoolValue())
			assert.Equal(t, int64(7), attrs["i"].GetIntValue())
			assert.InDelta(t, 1.5, attrs["f"].GetDoubleValue(), 0)
			assert.Equal(t, "b", attrs["ss"].GetArrayValue().GetValues()[1].GetStringValue())
			assert.Equal(t, int64(2), attrs["is"].GetArrayValue().GetValues()[1].GetIntValue())
			assert.True(t, attrs["bs"].GetArrayValue().GetValues()[0].GetBoolValue())
			assert.InDelta(t, 0.5, attrs["fs"].GetArrayValue().GetValues()[0].GetDoubleValue(), 0)
			require.NotEmpty(t, dp.GetExemplars(), "a measurement in a sampled span leaves an exemplar")
			assert.Equal(t, traceID, hex.EncodeToString(dp.GetExemplars()[0].GetTraceId()))

			h := metrics["job.seconds"].GetHistogram()
			require.NotNil(t, h)
			require.Len(t, h.GetDataPoints(), 1)
			hdp := h.GetDataPoints()[0]
			assert.Equal(t, []float64{1, 10}, hdp.GetExplicitBounds())
			assert.Equal(t, []uint64{1, 1, 2}, hdp.GetBucketCounts())
			assert.Equal(t, uint64(4), hdp.GetCount())
			assert.InDelta(t, 115.5, hdp.GetSum(), 1e-9)
			assert.InDelta(t, 0.5, hdp.GetMin(), 0)
			assert.InDelta(t, 60, hdp.GetMax(), 0)

			logBodies := c.requests(t, tc.logsPath)
			require.NotEmpty(t, logBodies)
			raw := string(logBodies[0])
			assert.Regexp(t, `"traceId":"[0-9a-f]{32}"`, raw)
			assert.Contains(t, raw, `"traceId":"`+traceID+`"`)
			assert.Contains(t, raw, `"spanId":"`+span.SpanContext().SpanID().String()+`"`)
			assert.Contains(t, raw, `"severityNumber":9`, "enums are numbers")
			var lreq collogpb.ExportLogsServiceRequest
			unmarshalOTLPJSON(t, logBodies[0], &lreq)
			require.NotEmpty(t, lreq.GetResourceLogs())
			sl := lreq.GetResourceLogs()[0].GetScopeLogs()
			require.NotEmpty(t, sl)
			require.NotEmpty(t, sl[0].GetLogRecords())
			rec := sl[0].GetLogRecords()[0]
			assert.Equal(t, "job done", rec.GetBody().GetStringValue())
			assert.Equal(t, int32(9), int32(rec.GetSeverityNumber()), "INFO")
			assert.Equal(t, "INFO", rec.GetSeverityText())
			assert.Equal(t, int64(3), attrMap(rec.GetAttributes())["items"].GetIntValue())
			assert.Equal(t, traceID, hex.EncodeToString(rec.GetTraceId()))
			assert.Equal(t, uint32(1), rec.GetFlags(), "sampled")
			assert.NotZero(t, rec.GetTimeUnixNano())
			assert.NotZero(t, rec.GetObservedTimeUnixNano())

			c.mu.Lock()
			defer c.mu.Unlock()
			for _, tok := range append(c.tokens[tc.metricsPath], c.tokens[tc.logsPath]...) {
				assert.Equal(t, "s cret", tok, "headers are sent, URL-decoded")
			}
		})
	}
}

// A collector answering 404 on /v1/metrics makes the export an error
// naming the status (and Setup's reporter logs it once).
func TestHTTPJSONMetricsNotFound(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
		"OTEL_TRACES_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none",
	}
	log, _ := testLogger()
	p, err := tracing.Setup(t.Context(), tracing.WithGetenv(envMap(env)), tracing.WithLogger(log))
	require.NoError(t, err)
	defer shutdown(t, p)
	counter, err := p.MeterProvider.Meter("test").Int64Counter("job.items")
	require.NoError(t, err)
	counter.Add(t.Context(), 1)
	err = p.ForceFlush(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404 Not Found")
	assert.Contains(t, err.Error(), srv.URL+"/v1/metrics")
	assert.Equal(t, int64(1), p.Dropped().MetricExports)
}
