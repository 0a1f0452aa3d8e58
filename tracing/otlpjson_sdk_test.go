// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// The gate of the hand-written OTLP/JSON metric and log exporters (the
// SDK has no JSON encoding for them): the same SDK data exported by ours
// as OTLP/JSON and by the SDK's otlpmetrichttp and otlploghttp as
// protobuf decode to equal OTLP requests (TestOTLPJSONMatchesSDKExporters),
// and BenchmarkOTLPMetricExport and BenchmarkOTLPLogExport put the two
// side by side (`make bench` prints the ratios, for information: JSON
// costs more to write than protobuf).

// bodySink is an OTLP/HTTP endpoint that keeps the last request body.
type bodySink struct {
	mu   sync.Mutex
	last []byte
	srv  *httptest.Server
}

func newBodySink(tb testing.TB, keep bool) *bodySink {
	tb.Helper()
	s := &bodySink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if keep {
			s.mu.Lock()
			s.last = b
			s.mu.Unlock()
		}
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusOK)
	}))
	tb.Cleanup(s.srv.Close)
	return s
}

func (s *bodySink) body() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// gateTime is the log records' time.
var gateTime = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

var jsonHexID = regexp.MustCompile(`"(traceId|spanId)":"([0-9a-f]*)"`)

// decodeOTLPJSON decodes an OTLP/JSON body into m: the hex ids turned into
// protojson's base64 first, as the OTLP/JSON specification tells a
// receiver to.
func decodeOTLPJSON(tb testing.TB, body []byte, m proto.Message) {
	tb.Helper()
	b64 := jsonHexID.ReplaceAllFunc(body, func(s []byte) []byte {
		sub := jsonHexID.FindSubmatch(s)
		id, err := hex.DecodeString(string(sub[2]))
		if err != nil {
			tb.Fatal(err)
		}
		return []byte(`"` + string(sub[1]) + `":"` + base64.StdEncoding.EncodeToString(id) + `"`)
	})
	if err := protojson.Unmarshal(b64, m); err != nil {
		tb.Fatalf("%v\n%s", err, body)
	}
}

// gateResource is a resource with a schema URL and attributes of every kind.
func gateResource(tb testing.TB) *resource.Resource {
	tb.Helper()
	res, err := resource.New(context.Background(), resource.WithSchemaURL("https://opentelemetry.io/schemas/1.40.0"), resource.WithAttributes(
		attribute.String("service.name", "gate"), attribute.Int64("n", 7), attribute.Bool("b", true), attribute.Float64("f", 0.5),
		attribute.StringSlice("ss", []string{"x", "y"}), attribute.Int64Slice("is", []int64{1, 2}),
	))
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// gateMetrics collects, from the SDK, one of every aggregation the SDK
// produces: int and float sums (monotonic and not), a gauge, an explicit
// histogram and a base-2 exponential one with exemplars of a sampled span.
func gateMetrics(tb testing.TB) *metricdata.ResourceMetrics {
	tb.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(gateResource(tb)),
		sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "expo"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 4}})))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m := mp.Meter("gate", metric.WithInstrumentationVersion("1.2.3"), metric.WithSchemaURL("https://opentelemetry.io/schemas/1.40.0"),
		metric.WithInstrumentationAttributes(attribute.String("scope.attr", "s")))
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xab, 1}, SpanID: trace.SpanID{0xcd, 2}, TraceFlags: trace.FlagsSampled}))
	attrs := metric.WithAttributes(attribute.String("topic", "requests"), attribute.Int("partition", 3), attribute.Bool("ok", true))
	ic, _ := m.Int64Counter("ic", metric.WithUnit("{message}"), metric.WithDescription("an int counter"))
	fc, _ := m.Float64Counter("fc", metric.WithUnit("By"))
	ud, _ := m.Int64UpDownCounter("ud")
	g, _ := m.Float64Gauge("g", metric.WithUnit("1"))
	h, _ := m.Float64Histogram("h", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.001, 0.01, 0.1, 1))
	e, _ := m.Float64Histogram("expo", metric.WithUnit("s"))
	for i, v := range []float64{0, 0.0005, 0.003, 0.05, 0.5, 2, 7.25} {
		ic.Add(ctx, int64(i+1), attrs)
		fc.Add(context.Background(), v, attrs)
		ud.Add(ctx, int64(3-i))
		g.Record(ctx, v, attrs)
		h.Record(ctx, v, attrs)
		h.Record(context.Background(), v, metric.WithAttributes(attribute.String("topic", "other")))
		e.Record(ctx, v, attrs)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		tb.Fatal(err)
	}
	return &rm
}

// gateLogs emits log records of every body kind, severity, attributes and
// a trace context through an SDK logger provider and returns them.
func gateLogs(tb testing.TB) []sdklog.Record {
	tb.Helper()
	c := &captureLogs{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(c)), sdklog.WithResource(gateResource(tb)))
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xab, 1}, SpanID: trace.SpanID{0xcd, 2}, TraceFlags: trace.FlagsSampled}))
	bodies := []attribute.Value{
		attribute.StringValue("hello"), attribute.Int64Value(42), attribute.BoolValue(true), attribute.Float64Value(1.5),
		attribute.ByteSliceValue([]byte{0, 1, 0xff}), attribute.SliceValue(attribute.StringValue("a"), attribute.Int64Value(1)),
		attribute.MapValue(attribute.String("k", "v"), attribute.Int64("n", 2)),
	}
	for i, body := range bodies {
		var r otellog.Record
		r.SetTimestamp(gateTime.Add(time.Duration(i) * time.Millisecond))
		r.SetObservedTimestamp(gateTime.Add(time.Second))
		r.SetSeverity(otellog.SeverityInfo + otellog.Severity(i))
		r.SetSeverityText("INFO")
		r.SetEventName("gate.event")
		r.SetBody(body)
		r.AddAttributes(attribute.String("topic", "requests"), attribute.Int("partition", i), attribute.Map("m", attribute.Bool("b", true)))
		logCtx := ctx
		if i%2 == 1 {
			logCtx = context.Background()
		}
		lp.Logger([]string{"a", "b"}[i%2], otellog.WithInstrumentationVersion("0.1"), otellog.WithSchemaURL("https://opentelemetry.io/schemas/1.40.0")).Emit(logCtx, r)
	}
	return c.records
}

// jsonExporterEnv points the JSON exporters at sink's endpoints.
func jsonExporterEnv(url string) func(string) string {
	env := map[string]string{envMetricsEndpoint: url + "/v1/metrics", envLogsEndpoint: url + "/v1/logs"}
	return func(k string) string { return env[k] }
}

// TestOTLPJSONMatchesSDKExporters: the same metrics (every aggregation,
// exemplars, resource and scope attributes) and the same log records
// (every body kind, severities, trace context, two scopes) exported as
// OTLP/JSON by kretrieve and as protobuf by the SDK's otlpmetrichttp and
// otlploghttp decode to equal requests: counts, sums, bucket counts,
// boundaries, scale, exemplars and attributes alike.
func TestOTLPJSONMatchesSDKExporters(t *testing.T) {
	ctx := context.Background()
	ours, theirs := newBodySink(t, true), newBodySink(t, true)

	rm := gateMetrics(t)
	jm, err := newJSONMetricExporter(jsonExporterEnv(ours.srv.URL), os.ReadFile, 0, MetricsPreferences{})
	if err != nil {
		t.Fatal(err)
	}
	pm, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(theirs.srv.URL+"/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	if err := jm.Export(ctx, rm); err != nil {
		t.Fatal(err)
	}
	if err := pm.Export(ctx, rm); err != nil {
		t.Fatal(err)
	}
	var gotM, wantM colmetricpb.ExportMetricsServiceRequest
	decodeOTLPJSON(t, ours.body(), &gotM)
	if err := proto.Unmarshal(theirs.body(), &wantM); err != nil {
		t.Fatal(err)
	}
	if n := len(wantM.GetResourceMetrics()[0].GetScopeMetrics()[0].GetMetrics()); n != 6 {
		t.Fatalf("the SDK exported %d metrics, want 6", n)
	}
	if !proto.Equal(&gotM, &wantM) {
		t.Errorf("metrics differ:\nkretrieve OTLP/JSON: %s\nSDK protobuf:        %s", protojson.Format(&gotM), protojson.Format(&wantM))
	}

	records := gateLogs(t)
	jl, err := newJSONLogExporter(jsonExporterEnv(ours.srv.URL), os.ReadFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(theirs.srv.URL+"/v1/logs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := jl.Export(ctx, records); err != nil {
		t.Fatal(err)
	}
	if err := pl.Export(ctx, records); err != nil {
		t.Fatal(err)
	}
	var gotL, wantL collogpb.ExportLogsServiceRequest
	decodeOTLPJSON(t, ours.body(), &gotL)
	if err := proto.Unmarshal(theirs.body(), &wantL); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sl := range wantL.GetResourceLogs()[0].GetScopeLogs() {
		n += len(sl.GetLogRecords())
	}
	if n != 7 || len(wantL.GetResourceLogs()[0].GetScopeLogs()) != 2 {
		t.Fatalf("the SDK exported %d records in %d scopes, want 7 in 2", n, len(wantL.GetResourceLogs()[0].GetScopeLogs()))
	}
	if !proto.Equal(&gotL, &wantL) {
		t.Errorf("logs differ:\nkretrieve OTLP/JSON: %s\nSDK protobuf:        %s", protojson.Format(&gotL), protojson.Format(&wantL))
	}
}

// BenchmarkOTLPMetricExport exports gateMetrics' six metrics to a local
// endpoint that discards them: kretrieve's OTLP/JSON exporter
// (kretrieve-json) and the SDK's otlpmetrichttp (sdk-protobuf).
func BenchmarkOTLPMetricExport(b *testing.B) {
	ctx := context.Background()
	sink := newBodySink(b, false)
	rm := gateMetrics(b)
	jm, err := newJSONMetricExporter(jsonExporterEnv(sink.srv.URL), os.ReadFile, 0, MetricsPreferences{})
	if err != nil {
		b.Fatal(err)
	}
	pm, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(sink.srv.URL+"/v1/metrics"))
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name   string
		export func(context.Context, *metricdata.ResourceMetrics) error
	}{{"kretrieve-json", jm.Export}, {"sdk-protobuf", pm.Export}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.export(ctx, rm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOTLPLogExport exports gateLogs' seven records the same two ways.
func BenchmarkOTLPLogExport(b *testing.B) {
	ctx := context.Background()
	sink := newBodySink(b, false)
	records := gateLogs(b)
	jl, err := newJSONLogExporter(jsonExporterEnv(sink.srv.URL), os.ReadFile, 0)
	if err != nil {
		b.Fatal(err)
	}
	pl, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(sink.srv.URL+"/v1/logs"))
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name   string
		export func(context.Context, []sdklog.Record) error
	}{{"kretrieve-json", jl.Export}, {"sdk-protobuf", pl.Export}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.export(ctx, records); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
