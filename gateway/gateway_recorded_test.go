// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/gateway"
)

// recordedGateway is a gateway without Kafka (requests are answered 400)
// whose spans and metrics are recorded.
func recordedGateway(t *testing.T, cfg gateway.Config) (*gateway.Gateway, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	g, err := gateway.New(cfg, nil, func(context.Context) error { return nil },
		gateway.WithTracerProvider(tp), gateway.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	return g, rec, reader
}

// badRequest is a request the gateway answers 400 without Kafka.
func badRequest(host string, header http.Header) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://"+host+"/v1/search", strings.NewReader(`{"query":`))
	r.RemoteAddr = "192.0.2.7:40000"
	for k, v := range header {
		r.Header[k] = v
	}
	r.Header.Set("Content-Type", "application/json")
	return r
}

func spanAttr(s sdktrace.ReadOnlySpan, key attribute.Key) (string, bool) {
	for _, a := range s.Attributes() {
		if a.Key == key {
			return a.Value.String(), true
		}
	}
	return "", false
}

// Security #4: a 1 MB User-Agent is recorded cut to MaxRecordedHeaderBytes.
func TestGatewayCapsRecordedUserAgent(t *testing.T) {
	g, rec, _ := recordedGateway(t, gateway.Config{MaxHeaderBytes: 2 << 20})
	w := httptest.NewRecorder()
	g.ServeHTTP(w, badRequest("example.com", http.Header{"User-Agent": {strings.Repeat("A", 1<<20)}}))
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	ua, _ := spanAttr(spans[0], "user_agent.original")
	if len(ua) == 0 || len(ua) > gateway.MaxRecordedHeaderBytes {
		t.Fatalf("user_agent.original is %d bytes, want 1..%d", len(ua), gateway.MaxRecordedHeaderBytes)
	}
}

// Security #4: X-Forwarded-For sets client.address only with TrustForwarded.
func TestGatewayTrustsForwardedOnlyWhenTold(t *testing.T) {
	for _, trust := range []bool{false, true} {
		g, rec, _ := recordedGateway(t, gateway.Config{TrustForwarded: trust})
		g.ServeHTTP(httptest.NewRecorder(), badRequest("example.com", http.Header{
			"X-Forwarded-For": {"203.0.113.99"}, "Forwarded": {"for=203.0.113.99"}}))
		addr, _ := spanAttr(rec.Ended()[0], "client.address")
		want := "192.0.2.7"
		if trust {
			want = "203.0.113.99"
		}
		if addr != want {
			t.Errorf("TrustForwarded=%t: client.address %q, want %q", trust, addr, want)
		}
	}
}

// Security #4: whatever Host callers send, spans and metrics carry the one
// server name: 2,500 hosts make one server.address series.
func TestGatewayServerNameIsFixed(t *testing.T) {
	g, rec, reader := recordedGateway(t, gateway.Config{ServerName: "gw.internal:8080"})
	for i := range 2500 {
		g.ServeHTTP(httptest.NewRecorder(), badRequest(fmt.Sprintf("h%d.example:%d", i, 1000+i), nil))
	}
	for _, s := range rec.Ended()[:3] {
		if addr, _ := spanAttr(s, "server.address"); addr != "gw.internal" {
			t.Fatalf("span server.address %q", addr)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	addrs := map[string]bool{}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "http.server.request.duration" {
				continue
			}
			found = true
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				v, _ := dp.Attributes.Value("server.address")
				p, _ := dp.Attributes.Value("server.port")
				addrs[v.String()+":"+p.String()] = true
			}
		}
	}
	if !found || len(addrs) != 1 || !addrs["gw.internal:8080"] {
		t.Fatalf("server.address series %v (metric found %t)", addrs, found)
	}
}
