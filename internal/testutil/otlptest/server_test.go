// SPDX-License-Identifier: Apache-2.0

package otlptest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func traceRequest() *coltracepb.ExportTraceServiceRequest {
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("service.name", "svc")}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "scope"},
			Spans: []*tracepb.Span{{
				TraceId:           bytes.Repeat([]byte{0xab}, 16),
				SpanId:            bytes.Repeat([]byte{0xcd}, 8),
				ParentSpanId:      bytes.Repeat([]byte{0xef}, 8),
				Name:              "canary-span",
				Kind:              tracepb.Span_SPAN_KIND_CONSUMER,
				StartTimeUnixNano: 1_000_000_000,
				EndTimeUnixNano:   2_000_000_000,
				Attributes: []*commonpb.KeyValue{
					strAttr("s", "v"),
					{Key: "i", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 7}}},
					{Key: "f", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 1.5}}},
					{Key: "b", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}},
				},
				Links: []*tracepb.Span_Link{{
					TraceId:    bytes.Repeat([]byte{0x01}, 16),
					SpanId:     bytes.Repeat([]byte{0x02}, 8),
					Attributes: []*commonpb.KeyValue{strAttr("l", "x")},
				}},
				Events: []*tracepb.Span_Event{{Name: "ev"}},
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
			}},
		}},
	}}}
}

func post(t *testing.T, url, contentType, encoding string, body []byte) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestServerDecodesTraces(t *testing.T) {
	raw, err := proto.Marshal(traceRequest())
	require.NoError(t, err)

	want := otlptest.Span{
		TraceID:            "abababababababababababababababab",
		SpanID:             "cdcdcdcdcdcdcdcd",
		ParentSpanID:       "efefefefefefefef",
		Name:               "canary-span",
		Kind:               "CONSUMER",
		Start:              time.Unix(1, 0),
		End:                time.Unix(2, 0),
		Attributes:         map[string]any{"s": "v", "i": int64(7), "f": 1.5, "b": true},
		Links:              []otlptest.Link{{TraceID: "01010101010101010101010101010101", SpanID: "0202020202020202", Attributes: map[string]any{"l": "x"}}},
		Events:             []string{"ev"},
		StatusCode:         "ERROR",
		StatusMessage:      "boom",
		ServiceName:        "svc",
		ResourceAttributes: map[string]any{"service.name": "svc"},
		ScopeName:          "scope",
	}

	for _, tc := range []struct {
		name     string
		encoding string
		body     []byte
	}{
		{name: "plain", body: raw},
		{name: "gzip", encoding: "gzip", body: gzipped(t, raw)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := otlptest.NewServer(t)
			code := post(t, s.Endpoint()+"/v1/traces", "application/x-protobuf", tc.encoding, tc.body)
			require.Equal(t, http.StatusOK, code)

			spans := s.Spans()
			require.Len(t, spans, 1)
			assert.Equal(t, want, spans[0])
			require.Len(t, s.RawBodies(), 1)
			assert.Equal(t, raw, s.RawBodies()[0], "raw body is stored after gzip decoding")
			assert.Contains(t, string(s.RawBodies()[0]), "canary-span")
			assert.Equal(t, 1, s.Requests())
		})
	}
}

func TestServerRejects(t *testing.T) {
	for _, tc := range []struct {
		name        string
		contentType string
		encoding    string
		body        []byte
		want        int
	}{
		{name: "json", contentType: "application/json", body: []byte("{}"), want: http.StatusUnsupportedMediaType},
		{name: "garbage protobuf", contentType: "application/x-protobuf", body: []byte{0xff, 0xff, 0xff}, want: http.StatusBadRequest},
		{name: "bad gzip", contentType: "application/x-protobuf", encoding: "gzip", body: []byte("nope"), want: http.StatusBadRequest},
		{name: "unknown encoding", contentType: "application/x-protobuf", encoding: "br", body: []byte("x"), want: http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := otlptest.NewServer(t)
			assert.Equal(t, tc.want, post(t, s.Endpoint()+"/v1/traces", tc.contentType, tc.encoding, tc.body))
			assert.Empty(t, s.Spans())
		})
	}

	t.Run("get", func(t *testing.T) {
		s := otlptest.NewServer(t)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.Endpoint()+"/v1/traces", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
}

func TestServerSetStatus(t *testing.T) {
	s := otlptest.NewServer(t)
	raw, err := proto.Marshal(traceRequest())
	require.NoError(t, err)

	s.SetStatus(http.StatusInternalServerError)
	assert.Equal(t, http.StatusInternalServerError, post(t, s.Endpoint()+"/v1/traces", "application/x-protobuf", "", raw))
	assert.Empty(t, s.Spans(), "failed requests store no spans")
	assert.Len(t, s.RawBodies(), 1, "failed requests keep their body")

	s.SetStatus(0)
	assert.Equal(t, http.StatusOK, post(t, s.Endpoint()+"/v1/traces", "application/x-protobuf", "", raw))
	assert.Len(t, s.Spans(), 1)
	assert.Equal(t, 2, s.Requests())
}

func TestServerHold(t *testing.T) {
	s := otlptest.NewServer(t)
	raw, err := proto.Marshal(traceRequest())
	require.NoError(t, err)

	release := s.Hold()
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.Endpoint()+"/v1/traces", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		_ = resp.Body.Close()
		done <- resp.StatusCode
	}()

	select {
	case <-done:
		t.Fatal("request finished while held")
	case <-time.After(100 * time.Millisecond):
	}
	assert.Empty(t, s.Spans())

	release()
	release() // idempotent
	assert.Equal(t, http.StatusOK, <-done)
	assert.Len(t, s.Spans(), 1)
}

func TestServerConcurrent(t *testing.T) {
	s := otlptest.NewServer(t)
	raw, err := proto.Marshal(traceRequest())
	require.NoError(t, err)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				assert.Equal(t, http.StatusOK, post(t, s.Endpoint()+"/v1/traces", "application/x-protobuf", "", raw))
				_ = s.Spans()
				_ = s.RawBodies()
			}
		})
	}
	wg.Wait()
	assert.Len(t, s.Spans(), 40)
	assert.Equal(t, 40, s.Requests())
}

// TestServerWithSDKExporters checks the server against the real OTLP/HTTP
// exporters, with gzip compression.
func TestServerWithSDKExporters(t *testing.T) {
	s := otlptest.NewServer(t)
	ctx := t.Context()
	res := resource.NewSchemaless(attribute.String("service.name", "otlptest-e2e"))

	texp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(s.Endpoint()+"/v1/traces"),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression),
	)
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(texp), sdktrace.WithResource(res))

	mexp, err := otlpmetrichttp.New(ctx,
		otlpmetrichttp.WithEndpointURL(s.Endpoint()+"/v1/metrics"),
		otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression),
	)
	require.NoError(t, err)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)), sdkmetric.WithResource(res))

	tracer := tp.Tracer("e2e")
	pctx, parent := tracer.Start(ctx, "parent", trace.WithSpanKind(trace.SpanKindServer))
	_, child := tracer.Start(pctx, "child", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.Int("n", 3)),
		trace.WithLinks(trace.Link{SpanContext: parent.SpanContext()}))
	child.AddEvent("sent")
	child.SetStatus(codes.Error, "failed")
	child.End()
	parent.End()

	counter, err := mp.Meter("e2e").Int64Counter("e2e.requests")
	require.NoError(t, err)
	counter.Add(ctx, 1)

	require.NoError(t, tp.Shutdown(ctx))
	require.NoError(t, mp.Shutdown(ctx))

	spans := s.WaitForSpans(t, 2, 5*time.Second)
	require.Len(t, spans, 2)
	byName := map[string]otlptest.Span{}
	for _, sp := range spans {
		byName[sp.Name] = sp
	}
	p, c := byName["parent"], byName["child"]
	assert.Equal(t, parent.SpanContext().TraceID().String(), p.TraceID)
	assert.Empty(t, p.ParentSpanID)
	assert.Equal(t, "SERVER", p.Kind)
	assert.Equal(t, p.TraceID, c.TraceID)
	assert.Equal(t, p.SpanID, c.ParentSpanID)
	assert.Equal(t, "PRODUCER", c.Kind)
	assert.Equal(t, int64(3), c.Attributes["n"])
	assert.Equal(t, []string{"sent"}, c.Events)
	assert.Equal(t, "ERROR", c.StatusCode)
	assert.Equal(t, "UNSET", p.StatusCode)
	require.Len(t, c.Links, 1)
	assert.Equal(t, p.SpanID, c.Links[0].SpanID)
	assert.Equal(t, "otlptest-e2e", c.ServiceName)
	assert.Equal(t, "e2e", c.ScopeName)
	assert.False(t, c.End.Before(c.Start))
	assert.Equal(t, []string{"e2e.requests"}, s.MetricNames())
}
