// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/tracecontext"
)

const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
)

// trustGateway is a gateway publishing to an in-process broker, with the
// spans it records and a reader of what it published.
type trustGateway struct {
	url   string
	spans *tracetest.SpanRecorder
	read  func() *kgo.Record
}

func newTrustGateway(t *testing.T, sampler sdktrace.Sampler, cfg gateway.Config) *trustGateway {
	t.Helper()
	const topic = "requests"
	addr := brokertest.NewBroker(t, 1).Addr()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

	tracer := kafkatrace.New(kafkatrace.WithTracerProvider(tp), kafkatrace.WithPropagator(prop))
	pub, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.WithHooks(tracer), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)

	client := producer.NewClient(t.Context(), producer.NewPublisher(pub, topic), nil, producer.WithTracerProvider(tp))
	g, err := gateway.New(cfg, client, func(context.Context) error { return nil },
		gateway.WithTracerProvider(tp), gateway.WithMeterProvider(noop.NewMeterProvider()), gateway.WithPropagator(prop))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return &trustGateway{url: srv.URL, spans: rec, read: func() *kgo.Record {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		for {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatalf("no record published: %v", err)
			}
			if rs := fs.Records(); len(rs) > 0 {
				return rs[0]
			}
		}
	}}
}

// publish posts a request with the caller's trace headers and returns the
// record it produced.
func (g *trustGateway) publish(t *testing.T, header http.Header) *kgo.Record {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, g.url+"/v1/requests", strings.NewReader(`{"query":"gzip"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	return g.read()
}

func header(r *kgo.Record, key string) string { return tracecontext.HeaderCarrier{Record: r}.Get(key) }

func callerHeaders(flags string) http.Header {
	return http.Header{
		"Traceparent": {"00-" + callerTraceID + "-" + callerSpanID + "-" + flags},
		"Tracestate":  {"caller=1"},
		"Baggage":     {"tenant=acme,secret=hunter2"},
	}
}

func TestGatewayTrustBoundary(t *testing.T) {
	never := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0))
	t.Run("off: the caller's trace and baggage continue", func(t *testing.T) {
		g := newTrustGateway(t, never, gateway.Config{})
		r := g.publish(t, callerHeaders("01"))
		if tp := header(r, "traceparent"); !strings.HasPrefix(tp, "00-"+callerTraceID+"-") || !strings.HasSuffix(tp, "-01") {
			t.Fatalf("traceparent %q, want the caller's sampled trace", tp)
		}
		if got := header(r, "baggage"); !strings.Contains(got, "tenant=acme") || !strings.Contains(got, "secret=hunter2") {
			t.Fatalf("baggage %q", got)
		}
	})
	t.Run("on: sampled=01 from the caller is not obeyed, baggage dropped but trusted keys", func(t *testing.T) {
		g := newTrustGateway(t, never, gateway.Config{TrustBoundary: true, TrustedBaggage: []string{"tenant"}})
		r := g.publish(t, callerHeaders("01"))
		tp := header(r, "traceparent")
		if strings.Contains(tp, callerTraceID) || !strings.HasSuffix(tp, "-00") || len(tp) != 55 {
			t.Fatalf("traceparent %q, want a new unsampled trace", tp)
		}
		if n := len(g.spans.Ended()); n != 0 {
			t.Fatalf("%d spans recorded under a ratio-0 sampler", n)
		}
		if got := header(r, "baggage"); got != "tenant=acme" {
			t.Fatalf("baggage %q, want only the trusted member", got)
		}
		if got := header(r, "tracestate"); got != "" {
			t.Fatalf("caller's tracestate %q carried into our trace", got)
		}
	})
	t.Run("on: the server span is a root linked to the caller", func(t *testing.T) {
		g := newTrustGateway(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), gateway.Config{TrustBoundary: true})
		r := g.publish(t, callerHeaders("00"))
		if got := header(r, "baggage"); got != "" {
			t.Fatalf("baggage %q crossed the boundary", got)
		}
		for _, s := range g.spans.Ended() {
			if s.Name() != "POST /v1/requests" {
				continue
			}
			if s.Parent().IsValid() || s.SpanContext().TraceID().String() == callerTraceID || !s.SpanContext().IsSampled() {
				t.Fatalf("server span %v parent %v: want a sampled root of our own", s.SpanContext(), s.Parent())
			}
			if ls := s.Links(); len(ls) != 1 || ls[0].SpanContext.TraceID().String() != callerTraceID || ls[0].SpanContext.SpanID().String() != callerSpanID {
				t.Fatalf("links %v, want the caller's span", ls)
			}
			if !strings.Contains(header(r, "traceparent"), s.SpanContext().TraceID().String()) {
				t.Fatal("the record is not in the server span's trace")
			}
			return
		}
		t.Fatal("no server span")
	})
}

// TestGatewayLimitsTraceContext: the W3C limits apply to HTTP as to Kafka,
// also where MaxHeaderBytes lets headers far larger than they allow in
// (by default a 100 KB baggage header is refused with 431 before that).
func TestGatewayLimitsTraceContext(t *testing.T) {
	g := newTrustGateway(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), gateway.Config{MaxHeaderBytes: 1 << 20})
	var members []string
	for i := range 40 {
		members = append(members, "k"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))+"=v")
	}
	h := callerHeaders("01")
	h["Tracestate"] = []string{strings.Join(members[:20], ","), strings.Join(members[20:], ",")} // 40 members over two fields
	h["Baggage"] = []string{strings.Repeat("k=v,", 25_000) + "k=v"}                              // 100 KB
	r := g.publish(t, h)
	if tp := header(r, "traceparent"); !strings.HasPrefix(tp, "00-"+callerTraceID+"-") {
		t.Fatalf("traceparent %q: the caller's trace was lost", tp)
	}
	if got, want := header(r, "tracestate"), strings.Join(members[:32], ","); got != want {
		t.Fatalf("tracestate %q, want the first 32 members %q", got, want)
	}
	if got := header(r, "baggage"); got != "" {
		t.Fatalf("oversized baggage kept: %.80q…", got)
	}

	h = callerHeaders("01")
	h["Traceparent"] = append(h["Traceparent"], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	r = g.publish(t, h)
	if tp := header(r, "traceparent"); strings.Contains(tp, callerTraceID) || strings.Contains(tp, "0af7651916cd43dd8448eb211c80319c") {
		t.Fatalf("traceparent %q: two traceparent fields must be ignored", tp)
	}
}
