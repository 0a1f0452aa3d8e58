// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkinstrumentation "go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// The Go SDK's OTLP metric and log exporters have no JSON encoding, so the
// http/json protocol of metrics and logs is served by the exporters of this
// file: they convert the SDK's data to the OTLP protobuf types and POST
// them as OTLP/JSON (protojson with lowerCamelCase names and enum numbers,
// trace and span ids as hex strings). They read the OTEL_EXPORTER_OTLP_*
// variables as the http/protobuf trace exporter does (see otlpEnv), with
// the METRICS_ or LOGS_ variants, and do not retry: a failed export is
// reported and counted like any other.

// errJSONExporterShutdown is returned by exports after Shutdown.
var errJSONExporterShutdown = errors.New("otlp/json exporter is shut down")

// jsonClient posts OTLP/JSON requests to one signal's endpoint.
type jsonClient struct {
	signal   string
	cfg      otlpwire.Config
	client   *http.Client
	shutdown atomic.Bool
}

// newJSONClient reads signal s's OTEL_EXPORTER_OTLP_* variables; a positive
// timeout replaces OTEL_EXPORTER_OTLP_(<SIGNAL>_)TIMEOUT.
func newJSONClient(getenv func(string) string, readFile func(string) ([]byte, error), s signalEnv, timeout time.Duration) (*jsonClient, error) {
	cfg, err := otlpEnv{getenv: getenv, readFile: readFile}.signalConfig(s, timeout)
	if err != nil {
		return nil, err
	}
	// Each post bounds itself with cfg.Timeout; no redirect is followed.
	return &jsonClient{signal: s.name, cfg: cfg, client: otlpwire.NewHTTPClient(cfg.TLS, 0)}, nil
}

// post sends msg as OTLP/JSON. An answer other than 2xx is an error naming
// its status.
func (c *jsonClient) post(ctx context.Context, msg proto.Message) error {
	if c.shutdown.Load() {
		return errJSONExporterShutdown
	}
	body, err := marshalOTLPJSON(msg)
	if err != nil {
		return fmt.Errorf("otlp/json %s: %w", c.signal, err)
	}
	if c.cfg.Compression == otlpwire.GzipCompression {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.EndpointURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp/json %s: %w", c.signal, err)
	}
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.Compression == otlpwire.GzipCompression {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp/json %s export: %w", c.signal, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("otlp/json %s export to %s: %s", c.signal, c.cfg.EndpointURL, resp.Status)
	}
	return nil
}

func (c *jsonClient) close() {
	c.shutdown.Store(true)
	c.client.CloseIdleConnections()
}

// marshalOTLPJSON encodes msg as the OTLP/JSON specification requires:
// protojson's lowerCamelCase field names, enums as integers, and traceId
// and spanId as hex strings rather than protojson's base64.
func marshalOTLPJSON(msg proto.Message) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return recodeIDs(b, func(s string) (string, error) {
		id, err := base64.StdEncoding.DecodeString(s)
		return hex.EncodeToString(id), err
	})
}

// recodeIDs rewrites the string value of every "traceId" and "spanId"
// member of the JSON document b with conv (OTLP attributes are key/value
// objects, so no attribute can be taken for an id).
func recodeIDs(b []byte, conv func(string) (string, error)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, m := range v {
				if s, ok := m.(string); ok && (k == "traceId" || k == "spanId") {
					id, err := conv(s)
					if err != nil {
						return fmt.Errorf("%s %q: %w", k, s, err)
					}
					v[k] = id
					continue
				}
				if err := walk(m); err != nil {
					return err
				}
			}
		case []any:
			for _, m := range v {
				if err := walk(m); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// jsonMetricExporter is the http/json metric exporter.
type jsonMetricExporter struct {
	c           *jsonClient
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
}

// newJSONMetricExporter returns the http/json metric exporter of getenv's
// variables with prefs' selectors.
func newJSONMetricExporter(getenv func(string) string, readFile func(string) ([]byte, error), timeout time.Duration, prefs MetricsPreferences) (*jsonMetricExporter, error) {
	c, err := newJSONClient(getenv, readFile, metricsEnv, timeout)
	if err != nil {
		return nil, err
	}
	return &jsonMetricExporter{c: c, temporality: prefs.temporalitySelector(), aggregation: prefs.aggregationSelector()}, nil
}

func (e *jsonMetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

func (e *jsonMetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.aggregation(k)
}

func (e *jsonMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.c.post(ctx, metricsRequest(rm))
}

// ForceFlush does nothing: the exporter holds no data.
func (e *jsonMetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

func (e *jsonMetricExporter) Shutdown(ctx context.Context) error {
	e.c.close()
	return ctx.Err()
}

// jsonLogExporter is the http/json log exporter.
type jsonLogExporter struct{ c *jsonClient }

// newJSONLogExporter returns the http/json log exporter of getenv's
// variables.
func newJSONLogExporter(getenv func(string) string, readFile func(string) ([]byte, error), timeout time.Duration) (*jsonLogExporter, error) {
	c, err := newJSONClient(getenv, readFile, logsEnv, timeout)
	if err != nil {
		return nil, err
	}
	return &jsonLogExporter{c: c}, nil
}

func (e *jsonLogExporter) Export(ctx context.Context, records []sdklog.Record) error {
	if len(records) == 0 {
		return nil
	}
	return e.c.post(ctx, logsRequest(records))
}

// ForceFlush does nothing: the exporter holds no data.
func (e *jsonLogExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

func (e *jsonLogExporter) Shutdown(ctx context.Context) error {
	e.c.close()
	return ctx.Err()
}

// metricsRequest converts rm to its OTLP request.
func metricsRequest(rm *metricdata.ResourceMetrics) *colmetricpb.ExportMetricsServiceRequest {
	out := &metricspb.ResourceMetrics{Resource: resourceProto(rm.Resource)}
	if rm.Resource != nil {
		out.SchemaUrl = rm.Resource.SchemaURL()
	}
	for _, sm := range rm.ScopeMetrics {
		s := &metricspb.ScopeMetrics{Scope: scopeProto(sm.Scope), SchemaUrl: sm.Scope.SchemaURL}
		for _, m := range sm.Metrics {
			if pm := metricProto(m); pm != nil {
				s.Metrics = append(s.Metrics, pm)
			}
		}
		out.ScopeMetrics = append(out.ScopeMetrics, s)
	}
	return &colmetricpb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{out}}
}

// metricProto converts m, or returns nil for an aggregation OTLP does not
// know.
func metricProto(m metricdata.Metrics) *metricspb.Metric {
	pm := &metricspb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
	if d, ok := m.Data.(metricdata.Summary); ok {
		pm.Data = &metricspb.Metric_Summary{Summary: summaryProto(d)}
		return pm
	}
	if !setNumericData[int64](pm, m.Data) && !setNumericData[float64](pm, m.Data) {
		return nil
	}
	return pm
}

// setNumericData sets pm's data to a, an aggregation of N values, and
// reports whether a is one.
func setNumericData[N int64 | float64](pm *metricspb.Metric, a metricdata.Aggregation) bool {
	switch d := a.(type) {
	case metricdata.Gauge[N]:
		pm.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: numberPoints(d.DataPoints)}}
	case metricdata.Sum[N]:
		pm.Data = &metricspb.Metric_Sum{Sum: &metricspb.Sum{
			DataPoints: numberPoints(d.DataPoints), AggregationTemporality: temporalityProto(d.Temporality), IsMonotonic: d.IsMonotonic,
		}}
	case metricdata.Histogram[N]:
		pm.Data = &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
			DataPoints: mapSlice(d.DataPoints, histogramPoint[N]), AggregationTemporality: temporalityProto(d.Temporality),
		}}
	case metricdata.ExponentialHistogram[N]:
		pm.Data = &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
			DataPoints: mapSlice(d.DataPoints, expHistogramPoint[N]), AggregationTemporality: temporalityProto(d.Temporality),
		}}
	default:
		return false
	}
	return true
}

func temporalityProto(t metricdata.Temporality) metricspb.AggregationTemporality {
	switch t {
	case metricdata.DeltaTemporality:
		return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA
	case metricdata.CumulativeTemporality:
		return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	}
	return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_UNSPECIFIED
}

func numberPoints[N int64 | float64](dps []metricdata.DataPoint[N]) []*metricspb.NumberDataPoint {
	return mapSlice(dps, func(dp metricdata.DataPoint[N]) *metricspb.NumberDataPoint {
		p := &metricspb.NumberDataPoint{Exemplars: exemplarsProto(dp.Exemplars)}
		p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano = pointFields(dp.Attributes, dp.StartTime, dp.Time)
		setNumber(dp.Value,
			func(v int64) { p.Value = &metricspb.NumberDataPoint_AsInt{AsInt: v} },
			func(v float64) { p.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: v} })
		return p
	})
}

func histogramPoint[N int64 | float64](dp metricdata.HistogramDataPoint[N]) *metricspb.HistogramDataPoint {
	sum := float64(dp.Sum)
	p := &metricspb.HistogramDataPoint{
		Count: dp.Count, Sum: &sum, Min: extremum(dp.Min), Max: extremum(dp.Max),
		BucketCounts: dp.BucketCounts, ExplicitBounds: dp.Bounds,
		Exemplars: exemplarsProto(dp.Exemplars),
	}
	p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano = pointFields(dp.Attributes, dp.StartTime, dp.Time)
	return p
}

func expHistogramPoint[N int64 | float64](dp metricdata.ExponentialHistogramDataPoint[N]) *metricspb.ExponentialHistogramDataPoint {
	sum := float64(dp.Sum)
	p := &metricspb.ExponentialHistogramDataPoint{
		Count: dp.Count, Sum: &sum, Min: extremum(dp.Min), Max: extremum(dp.Max),
		Scale: dp.Scale, ZeroCount: dp.ZeroCount, ZeroThreshold: dp.ZeroThreshold,
		Positive:  &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: dp.PositiveBucket.Offset, BucketCounts: dp.PositiveBucket.Counts},
		Negative:  &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: dp.NegativeBucket.Offset, BucketCounts: dp.NegativeBucket.Counts},
		Exemplars: exemplarsProto(dp.Exemplars),
	}
	p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano = pointFields(dp.Attributes, dp.StartTime, dp.Time)
	return p
}

func summaryProto(s metricdata.Summary) *metricspb.Summary {
	return &metricspb.Summary{DataPoints: mapSlice(s.DataPoints, func(dp metricdata.SummaryDataPoint) *metricspb.SummaryDataPoint {
		p := &metricspb.SummaryDataPoint{Count: dp.Count, Sum: dp.Sum}
		p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano = pointFields(dp.Attributes, dp.StartTime, dp.Time)
		p.QuantileValues = mapSlice(dp.QuantileValues, func(q metricdata.QuantileValue) *metricspb.SummaryDataPoint_ValueAtQuantile {
			return &metricspb.SummaryDataPoint_ValueAtQuantile{Quantile: q.Quantile, Value: q.Value}
		})
		return p
	})}
}

// mapSlice returns f applied to every element of s, or nil for an empty s.
func mapSlice[T, U any](s []T, f func(T) U) []U {
	if len(s) == 0 {
		return nil
	}
	out := make([]U, 0, len(s))
	for _, e := range s {
		out = append(out, f(e))
	}
	return out
}

// setNumber hands v to asInt or asDouble, by its type: the two members of
// the value oneof of OTLP data points and exemplars.
func setNumber[N int64 | float64](v N, asInt func(int64), asDouble func(float64)) {
	switch v := any(v).(type) {
	case int64:
		asInt(v)
	case float64:
		asDouble(v)
	}
}

// pointFields returns the attributes, start time and time every OTLP data
// point has.
func pointFields(attrs attribute.Set, start, end time.Time) ([]*commonpb.KeyValue, uint64, uint64) {
	return keyValuesProto(attrs.ToSlice()), unixNanos(start), unixNanos(end)
}

func extremum[N int64 | float64](e metricdata.Extrema[N]) *float64 {
	v, ok := e.Value()
	if !ok {
		return nil
	}
	f := float64(v)
	return &f
}

func exemplarsProto[N int64 | float64](exs []metricdata.Exemplar[N]) []*metricspb.Exemplar {
	return mapSlice(exs, func(ex metricdata.Exemplar[N]) *metricspb.Exemplar {
		p := &metricspb.Exemplar{
			FilteredAttributes: keyValuesProto(ex.FilteredAttributes),
			TimeUnixNano:       unixNanos(ex.Time),
			SpanId:             ex.SpanID,
			TraceId:            ex.TraceID,
		}
		setNumber(ex.Value,
			func(v int64) { p.Value = &metricspb.Exemplar_AsInt{AsInt: v} },
			func(v float64) { p.Value = &metricspb.Exemplar_AsDouble{AsDouble: v} })
		return p
	})
}

// logScopeKey groups log records by resource and scope.
type logScopeKey struct {
	res   *resource.Resource
	scope sdkinstrumentation.Scope
}

// logsRequest converts records to their OTLP request, grouped by resource
// and scope in the order they first appear.
func logsRequest(records []sdklog.Record) *collogpb.ExportLogsServiceRequest {
	req := &collogpb.ExportLogsServiceRequest{}
	resources := map[*resource.Resource]*logspb.ResourceLogs{}
	scopes := map[logScopeKey]*logspb.ScopeLogs{}
	for i := range records {
		r := &records[i]
		res := r.Resource()
		rl, ok := resources[res]
		if !ok {
			rl = &logspb.ResourceLogs{Resource: resourceProto(res)}
			if res != nil {
				rl.SchemaUrl = res.SchemaURL()
			}
			resources[res] = rl
			req.ResourceLogs = append(req.ResourceLogs, rl)
		}
		key := logScopeKey{res: res, scope: r.InstrumentationScope()}
		sl, ok := scopes[key]
		if !ok {
			sl = &logspb.ScopeLogs{Scope: scopeProto(key.scope), SchemaUrl: key.scope.SchemaURL}
			scopes[key] = sl
			rl.ScopeLogs = append(rl.ScopeLogs, sl)
		}
		sl.LogRecords = append(sl.LogRecords, logRecordProto(r))
	}
	return req
}

func logRecordProto(r *sdklog.Record) *logspb.LogRecord {
	p := &logspb.LogRecord{
		TimeUnixNano:           unixNanos(r.Timestamp()),
		ObservedTimeUnixNano:   unixNanos(r.ObservedTimestamp()),
		SeverityNumber:         logspb.SeverityNumber(r.Severity()),
		SeverityText:           r.SeverityText(),
		DroppedAttributesCount: clampUint32(r.DroppedAttributes()),
		Flags:                  uint32(r.TraceFlags()),
		EventName:              r.EventName(),
	}
	if body := r.Body(); body.Type() != attribute.EMPTY {
		p.Body = anyValueProto(body)
	}
	if n := r.AttributesLen(); n > 0 {
		p.Attributes = make([]*commonpb.KeyValue, 0, n)
	}
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		p.Attributes = append(p.Attributes, keyValueProto(kv))
		return true
	})
	if tid := r.TraceID(); tid.IsValid() {
		p.TraceId = tid[:]
	}
	if sid := r.SpanID(); sid.IsValid() {
		p.SpanId = sid[:]
	}
	return p
}

func resourceProto(r *resource.Resource) *resourcepb.Resource {
	if r == nil {
		return &resourcepb.Resource{}
	}
	return &resourcepb.Resource{Attributes: keyValuesProto(r.Attributes())}
}

func scopeProto(s sdkinstrumentation.Scope) *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{Name: s.Name, Version: s.Version, Attributes: keyValuesProto(s.Attributes.ToSlice())}
}

func keyValuesProto(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	return mapSlice(kvs, keyValueProto)
}

func keyValueProto(kv attribute.KeyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: validUTF8(string(kv.Key)), Value: anyValueProto(kv.Value)}
}

// anyValueProto converts v as otlptracehttp's tracetransform does: slices
// become an ArrayValue, MAP a KeyValueList, EMPTY an AnyValue with no
// value, and an unknown type the string "INVALID".
func anyValueProto(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return stringValue(v.AsString())
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.BOOLSLICE:
		return arrayValue(v.AsBoolSlice(), func(b bool) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
		})
	case attribute.INT64SLICE:
		return arrayValue(v.AsInt64Slice(), func(i int64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
		})
	case attribute.FLOAT64SLICE:
		return arrayValue(v.AsFloat64Slice(), func(f float64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
		})
	case attribute.STRINGSLICE:
		return arrayValue(v.AsStringSlice(), stringValue)
	case attribute.SLICE:
		return arrayValue(v.AsSlice(), anyValueProto)
	case attribute.MAP:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValuesProto(v.AsMap())}}}
	case attribute.EMPTY:
		return &commonpb.AnyValue{}
	}
	return stringValue("INVALID")
}

func stringValue(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: validUTF8(s)}}
}

func arrayValue[T any](s []T, conv func(T) *commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: mapSlice(s, conv)}}}
}

// validUTF8 replaces invalid UTF-8, which protojson refuses to encode (the
// whole export would fail), with U+FFFD.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func unixNanos(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(max(t.UnixNano(), 0))
}

func clampUint32(n int) uint32 {
	return uint32(min(max(n, 0), 1<<32-1))
}
